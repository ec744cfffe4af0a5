//! `fencesim audit PATH… [--json | --sarif] [--rules FILE]…` and
//! `fencesim audit --list [--rules FILE]…`.

use std::path::{Path, PathBuf};

use super::Status;
use crate::audit;
use crate::escape;

/// `fencesim audit`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct AuditArgs {
    /// Source files or directories to scan.
    #[arg(required_unless_present = "list")]
    paths: Vec<PathBuf>,
    /// Print the catalogue instead: every kind (its SARIF rule id), the
    /// rules that find it with their library, calls and token source, and
    /// the libraries' words.
    #[arg(long, conflicts_with_all = ["paths", "json", "sarif"])]
    list: bool,
    /// Print one JSON object per finding (JSON lines).
    #[arg(long)]
    json: bool,
    /// Print the findings as one SARIF 2.1.0 log, for code-scanning tools.
    #[arg(long, conflicts_with = "json")]
    sarif: bool,
    /// A YAML rule file adding lock APIs (an in-house lock library) to the
    /// bundled ones; repeatable.
    #[arg(long = "rules", value_name = "FILE")]
    rules: Vec<PathBuf>,
}

pub(super) fn audit(args: AuditArgs) -> Status {
    let AuditArgs {
        paths,
        list,
        json,
        sarif,
        rules,
    } = args;
    let paths = &paths[..];
    let rules = match audit::Rules::load(&rules) {
        Ok(rules) => rules,
        Err(e) => {
            eprintln!("error: {}", escape::terminal(&e));
            return Status::Invalid;
        }
    };
    // The findings name the scenarios of the checkout the audit runs from.
    let scenarios = Path::new("scenarios");
    if list {
        print!("{}", escape::terminal_lines(&rules.listing(scenarios)));
        return Status::Ok;
    }
    let report = match audit::audit_with_rules(paths, scenarios, &rules) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("error: {}", escape::terminal(&e));
            return Status::Invalid;
        }
    };
    for note in &report.notes {
        eprintln!("note: {}", escape::terminal(note));
    }
    if sarif {
        let log = audit::sarif::log(&report, scenarios);
        let text = serde_json::to_string_pretty(&log).expect("a JSON value serializes");
        // Line by line: the escapes stay inside strings, the layout stays.
        for line in text.lines() {
            println!("{}", escape::json_line(line));
        }
    } else if json {
        for finding in &report.findings {
            println!("{}", escape::json_line(&finding.json().to_string()));
        }
    } else {
        for finding in &report.findings {
            println!("{}", escape::terminal(&finding.text()));
        }
        println!("{}", summary(&report));
    }
    match audit::status(&report.findings) {
        1 => Status::Failed,
        4 => Status::Inconclusive,
        _ => Status::Ok,
    }
}

/// `audit: 14 findings in 9 of 12 source files: 5 fenced, 6 unfenced, 3 unknown`.
fn summary(report: &audit::Audit) -> String {
    let count = |v: Option<bool>| report.findings.iter().filter(|f| f.fenced == v).count();
    let files = |n: usize| if n == 1 { "file" } else { "files" };
    let mut with: Vec<&str> = report.findings.iter().map(|f| f.file.as_str()).collect();
    with.dedup();
    let mut line = if report.findings.is_empty() {
        format!(
            "audit: no distributed lock found in {} source {}",
            report.files_read,
            files(report.files_read)
        )
    } else {
        format!(
            "audit: {} {} in {} of {} source {}: {} fenced, {} unfenced, {} unknown",
            report.findings.len(),
            if report.findings.len() == 1 {
                "finding"
            } else {
                "findings"
            },
            with.len(),
            report.files_read,
            files(report.files_read),
            count(Some(true)),
            count(Some(false)),
            count(None)
        )
    };
    let skipped = report.notes.len();
    if skipped > 0 {
        line.push_str(&format!(" ({skipped} skipped: see the notes)"));
    }
    line
}
