//! `fencesim merge FILE... [--json]`: the `explore --json` outputs of the
//! shards of one sweep (`--shard K/N`, on as many machines) as one sweep's
//! result, by [`crate::explore::shard::merge_files`]: the failing seeds in
//! seed order, one summary, and the seeds no shard has run yet (`gaps`).
//!
//! Exit status, as for `explore`: 3 when a seed crashed or timed out, else
//! 1 when a seed violates, else 4 when every seed was inconclusive, a seed
//! was cut short with no fault to explain it, the process under test never
//! took the lock in any seed, or the shards leave gaps (the sweep is not done: "no violation" would claim
//! seeds that never ran), else 0; 2 for a file that cannot be read or is
//! not the output of `explore --json` of one sweep.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde_json::Value;

use super::Status;
use crate::escape;
use crate::explore::shard;

/// How many failing seeds the human output lists.
const SHOWN: usize = 10;

/// `fencesim merge`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct MergeArgs {
    /// The shards' output files (one per shard; a resumed shard's
    /// output instead of the stopped one's).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Print the merged JSON lines (as `explore --json` prints them)
    /// instead of the human summary.
    #[arg(long)]
    json: bool,
}

pub(super) fn merge(args: MergeArgs) -> Status {
    let MergeArgs { files, json } = args;
    let files = &files[..];
    let mut texts = Vec::with_capacity(files.len());
    for path in files {
        match std::fs::read_to_string(path) {
            Ok(text) => texts.push((path.display().to_string(), text)),
            Err(e) => {
                eprintln!(
                    "error: cannot read {}: {e}",
                    escape::terminal(&path.display().to_string())
                );
                return Status::Invalid;
            }
        }
    }
    let merged = match shard::merge_files(texts.iter().map(|(f, t)| (f.as_str(), t.as_str()))) {
        Ok(merged) => merged,
        Err(e) => {
            eprintln!("error: {}", escape::terminal(&e));
            return Status::Invalid;
        }
    };
    let (summary, seeds) = merged.split_last().expect("merge ends with a summary");
    if json {
        let mut out = String::new();
        for line in &merged {
            writeln!(out, "{}", escape::json_line(&line.to_string())).unwrap();
        }
        print!("{out}");
    } else {
        print!(
            "{}",
            escape::terminal_lines(&human(summary, seeds, files.len()))
        );
    }
    status(summary)
}

/// The exit status of a merged summary.
fn status(summary: &Value) -> Status {
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    if n("crashed") > 0 || n("timed_out") > 0 {
        Status::Internal
    } else if n("violations") > 0 {
        Status::Failed
    } else if (n("seeds") > 0 && n("inconclusive") == n("seeds"))
        || n("cut_short_unexplained") > 0
        || (n("seeds") > 0 && n("idle_process") == n("seeds"))
        || summary["complete"] == false
    {
        // Nothing judged, or seeds not run: "no violation" would be vacuous.
        Status::Inconclusive
    } else {
        Status::Ok
    }
}

/// `a..b, c..d` for a list of `[a, b]` pairs.
fn ranges_text(v: &Value) -> String {
    let ranges: Vec<String> = v
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| Some(format!("{}..{}", p.get(0)?, p.get(1)?)))
        .collect();
    ranges.join(", ")
}

/// A map of counts as `3 completed, 1 stalled`.
fn counts_text(v: &Value) -> String {
    let counts: Vec<String> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, n)| n.as_u64().is_some_and(|n| n > 0))
        .map(|(k, n)| format!("{n} {}", escape::terminal(k)))
        .collect();
    counts.join(", ")
}

fn human(summary: &Value, seeds: &[Value], files: usize) -> String {
    let mut out = String::new();
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    let text = |v: &Value| v.as_str().map(escape::terminal);
    let mut what = Vec::new();
    if let Some(name) = text(&summary["scenario"]) {
        what.push(name);
    }
    if let Some(range) = text(&summary["range"]) {
        let shards = n("shards");
        let of = if shards == 1 { "shard" } else { "shards" };
        what.push(format!("seeds {range} in {shards} {of}"));
    }
    if let Some(faults) = text(&summary["faults"]) {
        what.push(format!("faults {faults}"));
    }
    what.push(format!(
        "from {files} {}",
        if files == 1 { "file" } else { "files" }
    ));
    writeln!(out, "merge     {}", what.join(", ")).unwrap();
    writeln!(
        out,
        "seeds     {} run: {}",
        n("seeds"),
        counts_text(&summary["outcomes"])
    )
    .unwrap();
    if n("violations") == 0 {
        writeln!(out, "verdict   no violation").unwrap();
    } else {
        writeln!(
            out,
            "verdict   {} seeds violate ({})",
            n("violations"),
            counts_text(&summary["by_kind"])
        )
        .unwrap();
    }
    if n("crashed") > 0 {
        writeln!(out, "crashed   {} seeds panicked", n("crashed")).unwrap();
    }
    if n("timed_out") > 0 {
        writeln!(
            out,
            "timed out {} seeds were still running after --run-timeout",
            n("timed_out")
        )
        .unwrap();
    }
    match summary["gaps"].as_array() {
        Some(gaps) if !gaps.is_empty() => {
            let each: Vec<String> = gaps
                .iter()
                .map(|g| {
                    format!(
                        "shard {} has not run {}",
                        text(&g["shard"]).unwrap_or_default(),
                        ranges_text(&g["missing"])
                    )
                })
                .collect();
            let line = format!(
                "{}; `explore FILE --resume OUTPUT` on a stopped shard's output runs its rest",
                each.join("; ")
            );
            super::output::labelled(&mut out, "gaps", &line);
        }
        Some(_) => writeln!(out, "complete  every seed of every shard ran").unwrap(),
        None => {}
    }
    if !seeds.is_empty() {
        writeln!(out).unwrap();
        writeln!(out, "failing seeds (lowest first):").unwrap();
        for line in seeds.iter().take(SHOWN) {
            writeln!(out, "  {}", seed_line(line)).unwrap();
        }
        let failing = (n("failing_seeds") as usize).max(seeds.len());
        if failing > SHOWN {
            let more = failing - SHOWN;
            let with_json = if summary["failing_seeds_truncated"] == true {
                format!(
                    "the lowest of each shard with --json: a shard writes at most {}",
                    crate::explore::sweep::MAX_KEPT
                )
            } else {
                "all of them with --json".to_owned()
            };
            writeln!(out, "  … and {more} more ({with_json})").unwrap();
        }
        let first = &seeds[0];
        writeln!(out).unwrap();
        writeln!(out, "lowest failing seed {}", first["seed"]).unwrap();
        if let Some(repro) = text(&first["repro"]) {
            writeln!(out, "repro     {repro}").unwrap();
        }
    }
    out
}

/// A failing seed's line, as `explore` prints it.
fn seed_line(v: &Value) -> String {
    let n = |k: &str| v[k].as_u64().unwrap_or(0);
    let s = |k: &str| v[k].as_str().map(escape::terminal).unwrap_or_default();
    let kinds: Vec<String> = v["kinds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(escape::terminal)
        .collect();
    let why = if !kinds.is_empty() {
        format!("  ({})", kinds.join(", "))
    } else if let Some(message) = v["crash"]["message"].as_str() {
        format!("  ({})", escape::terminal(message))
    } else {
        String::new()
    };
    format!(
        "seed {:<8} {:<9} {:<10} {} stale, {} accepted, {} rejected, {}, trace {}{why}",
        n("seed"),
        s("verdict"),
        s("outcome"),
        n("stale_writes"),
        n("accepted_writes"),
        n("rejected_writes"),
        super::output::plural(n("faults") as usize, "fault"),
        s("trace_hash"),
    )
}
