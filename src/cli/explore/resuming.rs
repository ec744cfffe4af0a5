//! `explore --resume OUTPUT`: the settings a stopped sweep recorded, checked
//! against the flags given, and the seeds left to run.

use std::path::{Path, PathBuf};

use super::Options;
use crate::explore::resume::{self, Recorded, Resumed};
use crate::explore::sweep::FaultMode;
use crate::scenario::Scenario;

/// Takes the fault settings a resumed file records (`--generic`,
/// `--workloads`, the mode,
/// a guided sweep's corpus, a depth bound, an exhaustive search) into
/// `options`; a flag given that says otherwise is an error.
pub(super) fn recorded_settings(
    path: &Path,
    r: &Resumed,
    options: &mut Options,
) -> Result<(), String> {
    let file = path.display();
    let clash = |flag: &str, given: &str, recorded: &str| {
        format!(
            "{file} was swept with {flag} {recorded}, not {given}: leave {flag} out to resume it"
        )
    };
    match r.generic {
        Some(true) => options.faults.set_generic(),
        Some(false) if options.faults.generic() => {
            return Err(format!(
                "{file} was swept without --generic: leave --generic out to resume it"
            ))
        }
        _ => {}
    }
    if r.workloads == Some(true) {
        options.faults.set_workloads();
    }
    let f = &mut options.faults;
    let recorded = r.faults.as_str();
    if options.given.faults && f.name() != recorded {
        return Err(clash("--faults", f.name(), recorded));
    }
    match &r.faults {
        Recorded::Random => f.arg = super::FaultsArg::Random,
        Recorded::Scenario => f.arg = super::FaultsArg::Scenario,
        Recorded::Depth(d) => {
            if let Some(given) = f.depth.filter(|given| given != d) {
                return Err(clash("--depth", &given.to_string(), &d.to_string()));
            }
            f.arg = super::FaultsArg::Depth;
            f.depth = Some(*d);
        }
        Recorded::Guided(g) => {
            let given = f.corpus.as_ref().map(|p| p.display().to_string());
            if let Some(given) = given.filter(|given| *given != g.file) {
                return Err(clash("--corpus", &given, &g.file));
            }
            let out = options.corpus_out.as_ref().map(|p| p.display().to_string());
            if let Some(given) = out.filter(|given| *given != g.out) {
                return Err(clash("--corpus-out", &given, &g.out));
            }
            f.arg = super::FaultsArg::Guided;
            f.corpus = Some(PathBuf::from(&g.file));
            f.entries = Some(g.loaded);
            options.corpus_out = Some(PathBuf::from(&g.out));
        }
        Recorded::Exhaustive { depth, .. } => options.exhaustive = Some(*depth),
    }
    Ok(())
}

/// Reads `--resume`'s file.
pub(super) fn read_resumed(path: &Path) -> Result<Resumed, String> {
    let file = path.display().to_string();
    let text = resume::read_file(path).map_err(|e| format!("cannot resume from {file}: {e}"))?;
    resume::read(&text, &file)
}

/// Checks what `--resume`'s file `r` (read from `path`) records against the
/// scenario and the flags given, and takes the sweep's settings from it.
pub(super) fn resumed(
    scenario: &Scenario,
    path: &Path,
    r: Resumed,
    options: &mut Options,
) -> Result<Resumed, String> {
    let file = path.display().to_string();
    if let Some(name) = &r.scenario {
        if *name != scenario.name {
            return Err(format!(
                "{file} is a sweep of scenario \"{name}\", not of {} (\"{}\")",
                scenario.file, scenario.name
            ));
        }
    }
    let o = &mut options.sweep;
    let clash = |flag: &str, given: String, recorded: String| {
        format!(
            "{file} was swept with {flag} {recorded}, not {given}: leave {flag} out to resume it"
        )
    };
    if options.given.seeds && o.seeds != r.range {
        let show = |r: &std::ops::Range<u64>| format!("{}..{}", r.start, r.end);
        return Err(clash("--seeds", show(&o.seeds), show(&r.range)));
    }
    if options.given.shard && o.shard != r.shard {
        return Err(clash("--shard", o.shard.to_string(), r.shard.to_string()));
    }
    if let (FaultMode::Guided(corpus), Recorded::Guided(g)) = (&o.faults, &r.faults) {
        if let Some(fingerprint) = g
            .fingerprint
            .as_ref()
            .filter(|f| **f != corpus.fingerprint())
        {
            return Err(format!(
                "{file}'s sweep loaded {} entries of {} with fingerprint {fingerprint}; \
                 the file's first {} entries now differ: it was edited or replaced, and the \
                 rest of the sweep would not draw what the stopped part drew",
                g.loaded, g.file, g.loaded
            ));
        }
    }
    o.seeds = r.range.clone();
    o.shard = r.shard;
    Ok(r)
}
