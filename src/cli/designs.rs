//! `fencesim designs [--markdown]`.

use std::fmt::Write as _;

use super::{output, Status};
use crate::design::catalog::{DesignInfo, KeySpec, Registry, Role, CLIENT_KEYS};

/// `fencesim designs`' flags.
#[derive(clap::Args, Debug)]
pub(super) struct DesignsArgs {
    /// Print the tables of docs/format.md (Markdown): each design's heading,
    /// summary and keys, then the client keys.
    #[arg(long)]
    markdown: bool,
}

pub(super) fn designs(registry: &Registry, args: &DesignsArgs) -> Status {
    if args.markdown {
        print!("{}", markdown(registry));
    } else {
        print!("{}", output::designs(registry));
    }
    Status::Ok
}

/// The header of a key table.
const HEADER: &str = "| key | type and range | default | meaning |\n|---|---|---|---|\n";

/// The `[[clients]]` table's first row: `name` is required and checked by
/// the loader itself, not one of [`CLIENT_KEYS`].
const CLIENT_NAME_ROW: &str = "| `name` | string | required | the client's node name: unique, \
                               a letter then letters, digits, `_` or `-` |";

/// What `designs --markdown` prints for `registry`: a `###` section per
/// role, a `####` section per design (its summary line and the table of its
/// keys), then the client keys' table. Each design's section is what
/// docs/format.md holds, followed there by prose about the design.
pub(super) fn markdown(registry: &Registry) -> String {
    let mut out = String::new();
    for (role, title) in [
        (Role::Lock, "Lock designs"),
        (Role::Storage, "Storage designs"),
    ] {
        writeln!(out, "### {title}\n").unwrap();
        for design in registry.designs().iter().filter(|d| d.role == role) {
            writeln!(out, "{}", section(design)).unwrap();
        }
    }
    let rows: Vec<String> = CLIENT_KEYS.iter().map(row).collect();
    write!(
        out,
        "### Client keys\n\n{HEADER}{CLIENT_NAME_ROW}\n{}\n",
        rows.join("\n")
    )
    .unwrap();
    writeln!(
        out,
        "\n### Client processes\n\nA `[[clients]]` table with `process = \"NAME\"` runs \
         that async code on the client's node instead of the bundled client; the table \
         takes the client keys and the process's own.\n"
    )
    .unwrap();
    for p in registry.processes() {
        let speaks = p.locks.map_or(String::new(), |locks| {
            let names: Vec<String> = locks.iter().map(|l| format!("`{l}`")).collect();
            format!(" It speaks to the lock designs {}.", names.join(", "))
        });
        let table = if p.keys.is_empty() {
            format!("`{}` takes no key besides the client keys.\n", p.name)
        } else {
            let rows: Vec<String> = p.keys.iter().map(row).collect();
            format!("{HEADER}{}\n", rows.join("\n"))
        };
        writeln!(
            out,
            "#### {}\n\n`{}`: {}.{speaks}\n\n{table}",
            p.name, p.name, p.summary
        )
        .unwrap();
    }
    out
}

/// A design's heading, summary line and table, ending in a newline.
fn section(design: &DesignInfo) -> String {
    let table = if design.keys.is_empty() {
        format!("`{}` takes no key besides `design`.\n", design.name)
    } else {
        let rows: Vec<String> = design.keys.iter().map(row).collect();
        format!("{HEADER}{}\n", rows.join("\n"))
    };
    format!(
        "#### {}\n\n`{}`: {}.\n\n{table}",
        design.name, design.name, design.summary
    )
}

/// A key as a row: its name, kind (with `|` escaped), default and doc.
fn row(key: &KeySpec) -> String {
    let default = key
        .default
        .as_ref()
        .map_or("required".to_owned(), |d| format!("`{d}`"));
    let kind = key.kind.to_string().replace('|', "\\|");
    format!("| `{}` | {kind} | {default} | {} |", key.name, key.doc)
}
