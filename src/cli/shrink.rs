//! `fencesim shrink FILE --seed N [--out FILE] [--faults random|scenario]`:
//! shrinks the seed's fault schedule and writes a standalone scenario that
//! still fails.
//!
//! Exit status: 0 when the shrunk scenario was written and still violates;
//! 1 when the seed does not violate (nothing to shrink); 2 for a bad file,
//! flag or output path, or a seed the scenario file cannot hold; 3 when the
//! seed crashed or timed out.

use std::path::{Path, PathBuf};

use super::files::{self, Replace};
use super::output::plural;
use super::{load, repro_command, FaultsArg, FaultsChoice, Replay, Status};
use crate::design::catalog::Registry;
use crate::escape;
use crate::explore::describe;
use crate::explore::shrink::{self, NotFailing};
use crate::explore::sweep::Runs;
use crate::oracle::{Report, Verdict, ViolationKind};
use crate::repro::shell_quote;
use crate::scenario::to_toml;

/// How every scenario `shrink` writes begins: then the command that wrote
/// it, `fencesim shrink …` or a custom binary's (see
/// [`crate::repro::program_name`]).
const HEADER: &str = "# Written by `";

/// The header's last line names the checksum of the text after it: a file
/// whose text no longer matches was edited by hand, and is kept.
const CHECKSUM: &str = "# shrink's checksum of what follows (edit it and shrink keeps the file): ";

/// 64-bit FNV-1a of `text`, as 16 hex digits.
fn checksum(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// Whether `path` is a file shrink wrote and nobody edited since: its first
/// line is [`HEADER`] and a shrink command, and the text after its
/// [`CHECKSUM`] line matches it.
fn written_by_shrink(path: &Path) -> bool {
    if !files::starts_with(path, HEADER) {
        return false;
    }
    let Ok(text) = files::read_own(path, crate::scenario::MAX_FILE_BYTES) else {
        return false;
    };
    if !text.lines().next().is_some_and(|l| l.contains(" shrink ")) {
        return false;
    }
    let Some(at) = text.find(&format!("\n{CHECKSUM}")) else {
        return false;
    };
    let line = &text[at + 1 + CHECKSUM.len()..];
    let Some((sum, body)) = line.split_once('\n') else {
        return false;
    };
    sum == checksum(body)
}

/// `fencesim shrink`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct ShrinkArgs {
    /// The scenario file.
    file: PathBuf,
    /// The failing seed.
    #[arg(long)]
    seed: u64,
    /// Where to write the shrunk scenario (default: STEM-seed-N-shrunk.toml
    /// in the current directory).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Replace the output file even if shrink did not write it.
    #[arg(long)]
    force: bool,
    /// The faults the seed failed with, as for `explore`.
    #[arg(long, value_enum, default_value_t = FaultsArg::Random)]
    faults: FaultsArg,
    #[command(flatten)]
    replay: Replay,
}

/// The file shrink writes at `out` for `seed` of `file`: the header that
/// says which program wrote it and how to replay it (a custom binary built
/// on [`crate::cli::main_with`] names itself, so the line runs the designs
/// the file needs), the checksum line, then `scenario` (TOML).
fn file_text(program: &str, file: &str, seed: u64, out: &str, scenario: &str) -> String {
    let header = format!(
        "{HEADER}{program} shrink {} --seed {seed}`: the smallest fault schedule found\n\
         # that still breaks the design. `{program} run {}` replays it; it has no [expect],\n\
         # so run exits 1 while the bug is there and 0 once the design is fixed.\n",
        escape::terminal(&shell_quote(file)),
        escape::terminal(&shell_quote(out))
    );
    let body = format!("\n{scenario}");
    format!("{header}{CHECKSUM}{}\n{body}", checksum(&body))
}

/// The command that shrinks `seed` of `file` (random faults).
pub(super) fn command(file: &str, seed: u64) -> String {
    format!(
        "{} shrink {} --seed {seed}",
        super::invocation(),
        shell_quote(file)
    )
}

/// Whether `seed` fits a scenario file's `seed` key (a TOML integer, so at
/// most `i64::MAX`): the shrunk scenario must replay with its own seed.
pub(super) fn writable_seed(seed: u64) -> bool {
    i64::try_from(seed).is_ok()
}

pub(super) fn shrink(registry: &Registry, args: ShrinkArgs, runs: &Runs) -> Status {
    let ShrinkArgs {
        file,
        seed,
        out,
        force,
        faults,
        replay,
    } = args;
    let file = file.as_path();
    let faults = FaultsChoice::new(faults, replay);
    if !writable_seed(seed) {
        eprintln!(
            "error: invalid value '{seed}' for '--seed <SEED>': shrink writes the seed into a \
             scenario file, whose integers stop at {} (TOML); replay the seed with \
             `{} run {} --seed {seed} --faults {}` instead",
            i64::MAX,
            super::invocation(),
            shell_quote(&file.display().to_string()),
            faults.name()
        );
        return Status::Invalid;
    }
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    let scenario = faults.scenario(scenario);
    let Some(mode) = faults.mode(&scenario, runs) else {
        return Status::Invalid;
    };
    let defaulted = out.is_none();
    let out = out.unwrap_or_else(|| {
        let stem = file
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("scenario");
        PathBuf::from(format!("{stem}-seed-{seed}-shrunk.toml"))
    });
    let replace = if force { Replace::Force } else { Replace::Own };
    // A file shrink wrote, unedited since: running the same shrink again
    // replaces it.
    let own = |path: &Path| written_by_shrink(path);
    // Refused before the (long) shrinking, and checked again when writing.
    if let Err(e) = files::check_target(&out, replace, own) {
        eprintln!("error: --out: {e}");
        return Status::Invalid;
    }
    let shrunk = match shrink::shrink_with(runs, &scenario, seed, mode.clone()) {
        Ok(s) => s,
        Err(NotFailing(report)) => {
            eprintln!(
                "seed {seed} of {} does not violate (verdict {}, outcome {}): nothing to shrink",
                escape::terminal(&scenario.file),
                report.verdict.as_str(),
                report.outcome
            );
            return if report.outcome.is_error() {
                Status::Internal
            } else {
                Status::Failed
            };
        }
    };
    let out_text = out.display().to_string();
    let mut shrunk_scenario = shrunk.scenario.clone();
    shrunk_scenario.file = out_text.clone();
    let text = file_text(
        &crate::repro::program_name(),
        &scenario.file,
        seed,
        &out_text,
        &to_toml(&shrunk_scenario),
    );
    if let Err(e) = files::write(&out, text.as_bytes(), replace, own) {
        eprintln!("error: --out: {e}");
        return Status::Invalid;
    }
    println!(
        "shrink    {} seed {seed}, faults {}: {} runs",
        escape::terminal(&scenario.file),
        mode.as_str(),
        shrunk.runs
    );
    println!("before    {}", plural(shrunk.before.len(), "fault"));
    for f in &shrunk.before {
        println!("  {}", escape::terminal(&describe(f)));
    }
    println!("after     {}", plural(shrunk.after.len(), "fault"));
    for f in &shrunk.after {
        println!("  {}", escape::terminal(&describe(f)));
    }
    let r = &shrunk.run.report;
    println!(
        "verdict   {}: {} ({} accepted, {} rejected)",
        r.verdict.as_str(),
        kinds_text(r, shrunk.scenario.strict),
        r.accepted_writes,
        r.rejected_writes
    );
    // The finding as the shrunk run numbers its grants (a fault removed
    // may have taken a grant before it).
    let kept = match &shrunk.kept {
        Some(signature) => signature.to_string(),
        None => shrunk.target.to_string(),
    };
    println!("kept      {}", escape::terminal(&kept));
    if defaulted {
        // Said where it lands, not only in the docs: the current directory
        // is where the user stood, not where the scenario is.
        println!(
            "wrote     {} in the current directory (--out FILE writes it elsewhere)",
            escape::terminal(&out_text)
        );
    } else {
        println!("wrote     {}", escape::terminal(&out_text));
    }
    let mut repro = repro_command(&out_text, seed);
    if let Some(cut) = repro.rfind(" --seed") {
        repro.truncate(cut);
    }
    println!("repro     {}", escape::terminal(&repro));
    if r.verdict == Verdict::Violation || !shrunk.run.expectations_met {
        Status::Ok
    } else {
        eprintln!("error: the shrunk scenario no longer violates; this is a bug in shrink");
        Status::Internal
    }
}

/// Every kind of finding in `r`, with its count: `1 stale_write, 2
/// zombie_write (not counted without strict)`.
fn kinds_text(r: &Report, strict: bool) -> String {
    let mut kinds: Vec<ViolationKind> = r.violations.iter().map(|v| v.kind).collect();
    kinds.sort();
    kinds.dedup();
    if kinds.is_empty() {
        return "no finding".to_owned();
    }
    kinds
        .iter()
        .map(|k| {
            let n = r.violations.iter().filter(|v| v.kind == *k).count();
            let note = match *k {
                ViolationKind::LateWrite => " (never counted)",
                ViolationKind::ZombieWrite if !strict => " (not counted without strict)",
                _ => "",
            };
            format!("{n} {k}{note}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_custom_binary_names_itself_and_shrink_knows_its_file_again() {
        let dir = std::env::temp_dir().join(format!("fencesim-shrink-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let scenario = "name = \"s\"\n";
        for program in ["fencesim", "custom_lock"] {
            let text = file_text(program, "grace.toml", 5, "out.toml", scenario);
            assert!(
                text.starts_with(&format!(
                    "# Written by `{program} shrink grace.toml --seed 5`"
                )),
                "{text}"
            );
            assert!(text.contains(&format!("`{program} run out.toml` replays it")));
            let path = dir.join(format!("{program}.toml"));
            std::fs::write(&path, &text).unwrap();
            assert!(written_by_shrink(&path), "{text}");
            // Edited by hand: kept.
            std::fs::write(&path, text.replace("name = \"s\"", "name = \"t\"")).unwrap();
            assert!(!written_by_shrink(&path));
        }
        // A file of the same opening that is not shrink's.
        let path = dir.join("other.toml");
        std::fs::write(&path, "# Written by `me`\nname = \"s\"\n").unwrap();
        assert!(!written_by_shrink(&path));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
