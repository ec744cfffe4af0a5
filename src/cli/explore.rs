//! `fencesim explore FILE [--seeds A..B] [--jobs N] [--shard K/N]
//! [--faults random|scenario] [--until N] [--time DURATION] [--json]
//! [--resume OUT] [--exhaustive 1|2 [--max-runs N]]`.
//!
//! `--until N` stops after the lowest N failing seeds (counted in seed
//! order, so the same seeds with any `--jobs`), `--time` after a budget of
//! wall time; the summary says why it stopped (`"stopped_by"`) and how many
//! seeds it took per failing seed (`"seeds_per_failure"`).
//!
//! With `--json` a sweep streams: each failing seed's line as soon as every
//! seed before it is done (so lines come in seed order), a checkpoint line
//! (`"progress": true`) every thousand seeds or five seconds, and the
//! summary last. SIGINT or SIGTERM stop it cleanly: no new seed starts, the
//! running ones finish and are written, then the summary, whose
//! `completed_ranges` say which seeds ran; the exit status is then 130
//! (SIGINT) or 143 (SIGTERM). A second signal ends the process at once.
//!
//! Exit status, by the contract's order (3 > 2 > 1 > 4 > 0):
//! - 3 when any seed crashed or outlived `--run-timeout` (a panic or a hang
//!   in a design or the world is a bug the sweep cannot judge), even if
//!   others violate: the summary still lists both, each with its repro;
//! - 2 for a bad file or flag;
//! - 1 when any seed violates;
//! - 4 when every seed was inconclusive (no write reached the storage in
//!   any of them: "no violation" would be vacuous);
//! - 0 otherwise. Seeds that stall or hit the time or event limit are
//!   counted apart (`cut_short`), as are inconclusive seeds and seeds where
//!   a scenario fault never fired, but they are not failures: the oracle
//!   judges what they did up to that point. The summary says plainly when no
//!   seed reached the situation the sweep was meant to test.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::output::plural;
use super::{load, repro_command, Status};
use crate::design::catalog::Registry;
use crate::escape;
use crate::explore::exhaustive::{self, ExhaustiveResult};
use crate::explore::generic::{self, Reproduced};
use crate::explore::resume::{self, Recorded, Resumed, Sessions};
use crate::explore::shard::Shard;
use crate::explore::sweep::{
    self, FaultMode, SeedReport, StopRules, StoppedBy, SweepEvent, SweepOptions, SweepSummary,
};
use crate::explore::{describe, guided};
use crate::scenario::Scenario;
use sim::journal::seconds;

pub(super) struct Options {
    pub sweep: SweepOptions,
    pub json: bool,
    pub exhaustive: Option<u8>,
    /// `--max-runs`: the most runs `--exhaustive` may make.
    pub max_runs: Option<u64>,
    /// `--resume`: a stopped sweep's `--json` output.
    pub resume: Option<PathBuf>,
    /// Which of `--seeds`, `--shard`, `--faults` the user gave (a resumed
    /// sweep takes them from its file; given ones must agree).
    pub given: Given,
    /// `--until` and `--time`.
    pub rules: StopRules,
    /// `--faults` (or `--guided`) with `--corpus`: resolved into
    /// `sweep.faults` once the scenario is loaded.
    pub faults: super::FaultsChoice,
    /// `--corpus-out`: where a guided sweep writes its grown corpus
    /// (default: `--corpus`).
    pub corpus_out: Option<PathBuf>,
}

/// The sweep settings given on the command line.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Given {
    pub seeds: bool,
    pub shard: bool,
    pub faults: bool,
}

pub(super) fn explore(registry: &Registry, file: &Path, mut options: Options) -> Status {
    let Some(scenario) = load(registry, file) else {
        return Status::Invalid;
    };
    // `--resume`'s file, read once: whether it was a `--generic` sweep
    // shapes the scenario; its other settings are checked once that is done.
    let recorded = match options.resume.clone() {
        None => None,
        Some(path) => match read_resumed(&path) {
            Ok(r) => Some((path, r)),
            Err(e) => {
                eprintln!("error: {e}");
                return Status::Invalid;
            }
        },
    };
    if let Some((path, r)) = &recorded {
        if let Err(e) = recorded_settings(path, r, &mut options) {
            eprintln!("error: {e}");
            return Status::Invalid;
        }
    }
    let scenario = options.faults.scenario(scenario);
    if options.exhaustive.is_some() {
        // Its fault mode is its plan's, made once the baseline has run.
        let resumed = match recorded {
            None => None,
            Some((path, r)) => match resumed(&scenario, &path, r, &mut options) {
                Ok(r) => Some(r),
                Err(e) => {
                    eprintln!("error: {e}");
                    return Status::Invalid;
                }
            },
        };
        let runs = sweep::Runs::default();
        return exhaustive(&runs, &scenario, &mut options, resumed);
    }
    let Some(mode) = options.faults.mode(&scenario) else {
        return Status::Invalid;
    };
    options.sweep.faults = mode;
    if options.corpus_out.is_some() && !matches!(options.sweep.faults, FaultMode::Guided(_)) {
        eprintln!("error: --corpus-out is for --guided");
        return Status::Invalid;
    }
    let resumed = match recorded {
        None => None,
        Some((path, r)) => match resumed(&scenario, &path, r, &mut options) {
            Ok(r) => Some(r),
            Err(e) => {
                eprintln!("error: {e}");
                return Status::Invalid;
            }
        },
    };
    // Every run is made with the designs the scenario was loaded with.
    let runs = sweep::Runs::default();
    sweep(&runs, &scenario, &options, resumed)
}

/// Takes the fault settings a resumed file records (`--generic`, the mode,
/// a guided sweep's corpus, a depth bound, an exhaustive search) into
/// `options`; a flag given that says otherwise is an error.
fn recorded_settings(path: &Path, r: &Resumed, options: &mut Options) -> Result<(), String> {
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
fn read_resumed(path: &Path) -> Result<Resumed, String> {
    let file = path.display().to_string();
    let text = resume::read_file(path).map_err(|e| format!("cannot resume from {file}: {e}"))?;
    resume::read(&text, &file)
}

/// Checks what `--resume`'s file `r` (read from `path`) records against the
/// scenario and the flags given, and takes the sweep's settings from it.
fn resumed(
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

fn repro(scenario: &Scenario, seed: u64, mode: &FaultMode, generic: &str) -> String {
    repro_command(&scenario.file, seed) + &crate::repro::faults_flags(mode) + generic
}

/// An exhaustive search run as a sweep of its injection sets.
struct Search {
    injections: Arc<exhaustive::Injections>,
    /// The run without injections.
    baseline: SeedReport,
}

fn sweep(
    runs: &sweep::Runs,
    scenario: &Scenario,
    options: &Options,
    resumed: Option<Resumed>,
) -> Status {
    sweep_or_search(runs, scenario, options, resumed, None)
}

/// The JSON lines a sweep writes to stdout: its own failing seeds and the
/// resumed file's (`earlier`), merged in seed order, at most
/// [`sweep::MAX_KEPT`].
struct Lines<'a> {
    out: std::io::StdoutLock<'a>,
    earlier: VecDeque<Value>,
    key: &'static str,
    written: usize,
}

impl Lines<'_> {
    fn write(&mut self, line: &Value) {
        // A closed stdout (`| head`) must not stop the sweep; it still ends
        // with its status.
        let _ = writeln!(self.out, "{}", escape::json_line(&line.to_string()));
        let _ = self.out.flush();
    }

    fn failing(&mut self, line: &Value) {
        if self.written < sweep::MAX_KEPT {
            self.write(line);
            self.written += 1;
        }
    }

    /// Writes the earlier failing lines numbered below `seed`.
    fn earlier_below(&mut self, seed: u64) {
        while self
            .earlier
            .front()
            .is_some_and(|v| v[self.key].as_u64().is_some_and(|s| s < seed))
        {
            let line = self.earlier.pop_front().expect("checked");
            self.failing(&line);
        }
    }
}

/// The lowest seed of `o`'s shard not in `completed`: every seed below it
/// is counted.
fn frontier(o: &SweepOptions, completed: &[std::ops::Range<u64>]) -> u64 {
    sweep::subtract(&o.seeds, completed)
        .iter()
        .find_map(|part| o.shard.nth(part, 0))
        .unwrap_or(o.seeds.end)
}

fn sweep_or_search(
    runs: &sweep::Runs,
    scenario: &Scenario,
    options: &Options,
    resumed: Option<Resumed>,
    search: Option<&Search>,
) -> Status {
    let o = &options.sweep;
    // A resumed sweep continues a file of JSON lines: it writes JSON lines.
    let json = options.json || resumed.is_some();
    let done = resumed.as_ref().map_or(Vec::new(), |r| r.completed.clone());
    let total = o.shard.len(&o.seeds);
    let already: u64 = done
        .iter()
        .map(|r| {
            o.shard
                .len(&(r.start.max(o.seeds.start)..r.end.min(o.seeds.end)))
        })
        .sum();
    let bar = Progress::new(total);
    let stop = Stop::install();
    let key = if search.is_some() {
        "injection"
    } else {
        "seed"
    };
    // The resumed file's failing seeds go out in seed order with the new ones.
    let mut lines = Lines {
        out: std::io::stdout().lock(),
        earlier: resumed
            .as_ref()
            .map_or(VecDeque::new(), |r| r.failing.iter().cloned().collect()),
        key,
        written: 0,
    };
    let base = resumed.as_ref().map(|r| r.base.clone());
    let combined = |line: Value| match &base {
        Some(base) => resume::add(base, &line, Sessions::Sequential),
        None => line,
    };
    let mut ran = already;
    let generic = options.faults.generic_flag();
    // The failing seeds that reproduce the bug `[expect]` describes: those
    // the resumed file counted (its failing lines stop at 10 000), then the
    // new ones.
    let mut reproduced = Reproduced::default();
    match &base {
        Some(base) if base.get("mechanism_seeds").is_some() => {
            reproduced.seeds = base["mechanism_seeds"].as_u64().unwrap_or(0);
            reproduced.first = base["first_mechanism_seed"].as_u64();
        }
        // Written before checkpoints counted them: its lines are all there is.
        _ => {
            for line in &lines.earlier {
                if let (Some(true), Some(seed)) =
                    (line["mechanism"].as_bool(), line["seed"].as_u64())
                {
                    reproduced.seeds += 1;
                    reproduced.first = Some(reproduced.first.map_or(seed, |f| f.min(seed)));
                }
            }
        }
    }
    // A guided sweep's corpus, grown in seed order from the one it loaded
    // (and, resumed, from what the stopped part found).
    let mut growth = match (&o.faults, resumed.as_ref().map(|r| &r.faults)) {
        (FaultMode::Guided(corpus), Some(Recorded::Guided(g))) => {
            Some(guided::Growth::resume(corpus, &g.found))
        }
        (FaultMode::Guided(corpus), _) => Some(guided::Growth::new(corpus)),
        _ => None,
    };
    let corpus_out = options.corpus_out.as_ref().map(|p| p.display().to_string());
    // What `--resume` needs to run the rest the same way, on every
    // checkpoint and the summary.
    let settings = |line: &mut Value, growth: &Option<guided::Growth>, r: &Reproduced| {
        if let Some(search) = search {
            line["depth"] = search.injections.depth.into();
            line["menu"] = search.injections.menu.len().into();
            line["baseline_verdict"] = search.baseline.verdict.as_str().into();
            return;
        }
        line["generic"] = options.faults.generic().into();
        line["mechanism"] = generic::describe(&scenario.expect).into();
        line["mechanism_seeds"] = r.seeds.into();
        line["first_mechanism_seed"] = r.first.into();
        if let FaultMode::Depth(d) = &o.faults {
            line["depth"] = d.d.into();
        }
        if let (FaultMode::Guided(corpus), Some(growth)) = (&o.faults, growth) {
            let found: Vec<Value> = growth
                .found()
                .into_iter()
                .map(|(seed, names)| serde_json::json!([seed, names]))
                .collect();
            line["corpus"] = serde_json::json!({
                "file": corpus.file,
                "loaded": growth.loaded(),
                "added": growth.added(),
                "out": corpus_out.clone().unwrap_or_else(|| corpus.file.clone()),
                "fingerprint": corpus.fingerprint(),
                "found": found,
            });
        }
    };
    let with_scenario = |mut line: Value| {
        line["scenario"] = scenario.name.clone().into();
        line
    };
    // A checkpoint claims every seed of its completed ranges: written only
    // once every earlier failing line among them is out, so that a resumed
    // sweep killed outright can itself be resumed.
    let checkpoint = |lines: &mut Lines<'_>,
                      summary: &SweepSummary,
                      growth: &Option<guided::Growth>,
                      r: &Reproduced| {
        lines.earlier_below(frontier(o, &summary.completed));
        if !lines.earlier.is_empty() {
            return;
        }
        let mut line = with_scenario(combined(summary.progress_json(o)));
        settings(&mut line, growth, r);
        lines.write(&line);
    };
    if json && resumed.is_some() {
        // At once: what the resumed file completed, as this file's own.
        let start = SweepSummary {
            completed: done.clone(),
            ..SweepSummary::default()
        };
        checkpoint(&mut lines, &start, &growth, &reproduced);
    }
    let summary = sweep::sweep_with_rules(
        scenario,
        o,
        runs,
        &done,
        options.rules,
        &|| stop.requested(),
        &mut |event| match event {
            SweepEvent::Seed(report) => {
                ran += 1;
                bar.update(ran, 0);
                if let Some(growth) = &mut growth {
                    growth.observe(report);
                }
                let matched = if report.is_failure() && search.is_none() {
                    reproduced.observe(report)
                } else {
                    None
                };
                if !json {
                    return;
                }
                lines.earlier_below(report.seed);
                if report.is_failure() {
                    let line = match search {
                        Some(search) => injection_line(scenario, search, report),
                        None => {
                            let mut line =
                                report.json(&repro(scenario, report.seed, &o.faults, generic));
                            if let Some(matched) = matched {
                                line["mechanism"] = matched.into();
                            }
                            line
                        }
                    };
                    lines.failing(&line);
                }
            }
            SweepEvent::Checkpoint(summary) => {
                if json {
                    checkpoint(&mut lines, summary, &growth, &reproduced);
                }
            }
        },
    );
    bar.finish();
    let signal = stop.signal();
    let corpus = match &growth {
        Some(growth) => match write_corpus(scenario, growth, options) {
            Ok(line) => Some(line),
            Err(e) => {
                eprintln!("error: {e}");
                return Status::Invalid;
            }
        },
        None => None,
    };
    if json {
        lines.earlier_below(u64::MAX);
        let mut last = with_scenario(combined(summary.json(o)));
        settings(&mut last, &growth, &reproduced);
        let failing = last["failing_seeds"].as_u64().unwrap_or(0);
        last["failing_seeds_truncated"] = (failing > lines.written as u64).into();
        if let Some(search) = search {
            search_summary(&mut last, search);
        }
        lines.write(&last);
        if let Some(signal) = signal {
            eprintln!("{}", stopped_note(&summary, signal, true, search.is_some()));
        }
        return match search {
            Some(_) => search_status(&last, signal),
            None => status(&last, signal),
        };
    }
    drop(lines);
    if let Some(search) = search {
        let result = ExhaustiveResult {
            baseline: search.baseline.clone(),
            menu: search.injections.menu.clone(),
            tried: summary.seeds,
            breaking: summary
                .failures
                .iter()
                .map(|r| (search.injections.set(r.seed), r.clone()))
                .collect(),
            wall: summary.wall,
        };
        print!(
            "{}",
            escape::terminal_lines(&exhaustive_human(
                scenario,
                search.injections.depth,
                &result
            ))
        );
        if let Some(signal) = signal {
            println!("{}", stopped_note(&summary, signal, false, true));
        }
        let mut last = summary.json(o);
        search_summary(&mut last, search);
        return search_status(&last, signal);
    }
    let mut text = human(scenario, o, &summary, generic);
    if let Some(line) = mechanism_line(scenario, &reproduced, summary.failing_seeds) {
        // Beside the failing seeds it counts, before their list.
        let at = text.find("\nspeed ").map_or(text.len(), |i| i + 1);
        text.insert_str(at, &line);
    }
    print!("{}", escape::terminal_lines(&text));
    if let Some(line) = &corpus {
        println!("{}", escape::terminal(line));
    }
    if let Some(signal) = signal {
        println!("{}", stopped_note(&summary, signal, false, false));
    }
    status(&summary.json(o), signal)
}

/// A failing injection set's line: the run's, with its seed (the search's),
/// the set's number (`injection`) and its faults (`injected`).
fn injection_line(scenario: &Scenario, search: &Search, report: &SeedReport) -> Value {
    let faults = search.injections.set(report.seed);
    let mut line = report.json(&super::repro_command(
        &scenario.file,
        search.injections.seed,
    ));
    line["seed"] = search.injections.seed.into();
    line["injection"] = report.seed.into();
    line["injected"] = faults.iter().map(describe).collect::<Vec<_>>().into();
    line
}

/// The `--exhaustive` summary's own fields, beside a sweep's.
fn search_summary(line: &mut Value, search: &Search) {
    let n = |k: &str| line[k].as_u64().unwrap_or(0);
    let (tried, breaking) = (n("seeds"), n("failing_seeds"));
    line["tried"] = tried.into();
    line["breaking"] = breaking.into();
    line["depth"] = search.injections.depth.into();
    line["menu"] = search.injections.menu.len().into();
    line["baseline_verdict"] = search.baseline.verdict.as_str().into();
}

/// An exhaustive search's exit status: 3 when a run crashed or timed out,
/// 1 when an injection broke the run, else 0 (130 or 143 when stopped).
fn search_status(summary: &Value, signal: Option<Signal>) -> Status {
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    match signal {
        Some(Signal::Interrupt) => Status::Interrupted,
        Some(Signal::Terminate) => Status::Terminated,
        None if n("crashed") > 0 || n("timed_out") > 0 => Status::Internal,
        None if n("failing_seeds") > 0 => Status::Failed,
        None => Status::Ok,
    }
}

/// Writes a guided sweep's grown corpus to `--corpus-out` (or `--corpus`);
/// returns the human line.
fn write_corpus(
    scenario: &Scenario,
    growth: &guided::Growth,
    options: &Options,
) -> Result<String, String> {
    let grown = growth.corpus(scenario);
    let loaded = &grown.file;
    let out = options
        .corpus_out
        .as_ref()
        .map_or_else(|| loaded.clone(), |p| p.display().to_string());
    std::fs::write(&out, grown.to_text(scenario))
        .map_err(|e| format!("cannot write corpus file {out}: {e}"))?;
    Ok(format!(
        "corpus    {} entries loaded from {loaded}, {} added (new milestone combinations); \
         {} written to {out}",
        growth.loaded(),
        growth.added(),
        grown.len()
    ))
}

/// The exit status of a sweep whose (whole) summary line is `summary`.
fn status(summary: &Value, signal: Option<Signal>) -> Status {
    let n = |k: &str| summary[k].as_u64().unwrap_or(0);
    match signal {
        Some(Signal::Interrupt) => Status::Interrupted,
        Some(Signal::Terminate) => Status::Terminated,
        None if n("crashed") > 0 || n("timed_out") > 0 => Status::Internal,
        None if n("violations") > 0 || n("failing_seeds") > 0 => Status::Failed,
        // Not one seed judged anything: "no violation" would be vacuous.
        None if n("seeds") > 0 && n("inconclusive") == n("seeds") => Status::Inconclusive,
        None => Status::Ok,
    }
}

/// The completed seed ranges, `0..412, 500..600`, or `none`.
fn ranges_text(s: &SweepSummary) -> String {
    let ranges: Vec<String> = s
        .completed
        .iter()
        .map(|r| format!("{}..{}", r.start, r.end))
        .collect();
    if ranges.is_empty() {
        "none".to_owned()
    } else {
        ranges.join(", ")
    }
}

fn stopped_note(s: &SweepSummary, signal: Signal, json: bool, search: bool) -> String {
    let how = if json {
        "`explore FILE --resume OUTPUT` runs the rest"
    } else {
        "with --json, `explore --resume` could run the rest"
    };
    let (what, ranges) = if search {
        ("injection sets", "injection sets ")
    } else {
        ("seeds", "")
    };
    format!(
        "stopped   by {} after {} {what}; completed {ranges}{} ({how})",
        signal.name(),
        s.seeds,
        ranges_text(s),
    )
}

/// The signal that stopped a sweep.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Signal {
    Interrupt,
    Terminate,
}

impl Signal {
    fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "SIGINT",
            Signal::Terminate => "SIGTERM",
        }
    }
}

/// SIGINT and SIGTERM, caught for the length of a sweep: the first asks it
/// to stop; a second one exits at once (130 or 143), for a sweep whose
/// running seeds take too long to finish.
struct Stop {
    requested: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Stop {
    fn install() -> Stop {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let requested = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        for sig in [SIGINT, SIGTERM] {
            // Order matters: the shutdown checks the flag before the first
            // signal sets it.
            let registered =
                signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, requested.clone())
                    .and_then(|_| {
                        signal_hook::flag::register_usize(sig, signal.clone(), sig as usize)
                    })
                    .and_then(|_| signal_hook::flag::register(sig, requested.clone()));
            if let Err(e) = registered {
                // Without the handlers a signal ends the sweep as before.
                eprintln!("warning: cannot catch signal {sig}: {e}");
            }
        }
        Stop { requested, signal }
    }

    fn requested(&self) -> bool {
        self.requested.load(Ordering::SeqCst)
    }

    fn signal(&self) -> Option<Signal> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        match self.signal.load(Ordering::SeqCst) as i32 {
            s if s == SIGINT => Some(Signal::Interrupt),
            s if s == SIGTERM => Some(Signal::Terminate),
            _ => None,
        }
    }
}

/// `mechanism stale_writes + lock_restarted: 7 of 120 failing seeds
/// reproduce it, the first seed 52`, when `[expect]` describes a bug.
fn mechanism_line(scenario: &Scenario, r: &Reproduced, failing: u64) -> Option<String> {
    let what = generic::describe(&scenario.expect)?;
    let found = match r.first {
        Some(first) => format!(
            "{} of {failing} failing seeds reproduce it, the first seed {first}",
            r.seeds
        ),
        None => format!("none of {failing} failing seeds reproduces it"),
    };
    Some(format!("mechanism {}: {found}\n", escape::terminal(&what)))
}

fn human(scenario: &Scenario, o: &SweepOptions, s: &SweepSummary, generic: &str) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let shard = if o.shard == Shard::WHOLE {
        String::new()
    } else {
        format!(", shard {}", o.shard)
    };
    writeln!(
        out,
        "explore   {} ({}), seeds {}..{}{shard}, faults {}{}, {}",
        escape::terminal(&scenario.name),
        escape::terminal(&scenario.file),
        o.seeds.start,
        o.seeds.end,
        o.faults.as_str(),
        if generic.is_empty() {
            ""
        } else {
            " (generic table)"
        },
        plural(o.jobs, "job")
    )
    .unwrap();
    let outcomes: Vec<String> = s.outcomes.iter().map(|(k, n)| format!("{n} {k}")).collect();
    writeln!(out, "seeds     {} run: {}", s.seeds, outcomes.join(", ")).unwrap();
    let kinds: Vec<String> = s.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect();
    if s.violations == 0 {
        writeln!(out, "verdict   no violation").unwrap();
    } else {
        writeln!(
            out,
            "verdict   {} seeds violate ({})",
            s.violations,
            kinds.join(", ")
        )
        .unwrap();
    }
    if !s.by_property.is_empty() {
        // A seed counts once per property it broke.
        let broken: Vec<String> = s
            .by_property
            .iter()
            .map(|(p, n)| format!("{n} {} not {p}", if *n == 1 { "seed" } else { "seeds" }))
            .collect();
        let what = format!(
            "{}: what [expect] always says holds in every seed",
            broken.join(", ")
        );
        super::output::labelled(&mut out, "broken", &what);
    }
    if s.crashed > 0 {
        writeln!(out, "crashed   {} seeds panicked", s.crashed).unwrap();
    }
    if let Some(rate) = s.seeds_per_failure() {
        writeln!(
            out,
            "found     {} failing seeds in {} seeds: one per {rate:.1} seeds",
            s.failing_seeds, s.seeds
        )
        .unwrap();
    }
    match s.stopped_by {
        Some(StoppedBy::Until) => writeln!(
            out,
            "stopped   by --until {}: the lowest {} failing seeds of the range, \
             completed {}",
            s.rules.until.unwrap_or(0),
            s.failing_seeds,
            ranges_text(s)
        )
        .unwrap(),
        Some(StoppedBy::Time) => writeln!(
            out,
            "stopped   by --time {} (wall), completed {}",
            humantime::format_duration(s.rules.time.unwrap_or_default()),
            ranges_text(s)
        )
        .unwrap(),
        // A signal's note follows the summary.
        Some(StoppedBy::Signal) | None => {}
    }
    let judged = format!(
        "{} of {} seeds: {} inconclusive (no write reached the storage), \
         {} cut short (stalled or at a limit), {} with a scenario fault that never fired",
        s.seeds - s.inconclusive,
        s.seeds,
        s.inconclusive,
        s.cut_short,
        s.unfired
    );
    super::output::labelled(&mut out, "judged", &judged);
    for line in untested(s) {
        super::output::labelled(&mut out, "untested", &line);
    }
    let reached: Vec<String> = s
        .milestone_counts()
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    let reached = if reached.is_empty() {
        "none".to_owned()
    } else {
        reached.join(", ")
    };
    super::output::labelled(
        &mut out,
        "reached",
        &format!("seeds per milestone: {reached}"),
    );
    if s.timed_out > 0 {
        writeln!(
            out,
            "timed out {} seeds were still running after --run-timeout (replay one to see where it hangs)",
            s.timed_out
        )
        .unwrap();
    }
    writeln!(
        out,
        "speed     {:.0} seeds/s, {} simulated in {} wall ({:.0}x)",
        s.seeds_per_sec(),
        seconds(s.sim_time.as_nanos() as u64),
        seconds(s.wall.as_nanos() as u64),
        s.sim_time.as_secs_f64() / s.wall.as_secs_f64().max(1e-9)
    )
    .unwrap();
    let shown: Vec<&SeedReport> = s.failures.iter().take(10).collect();
    if !shown.is_empty() {
        writeln!(out).unwrap();
        writeln!(out, "failing seeds (lowest first):").unwrap();
        for f in &shown {
            writeln!(out, "  {}", seed_line(f)).unwrap();
        }
        if s.failing_seeds > shown.len() as u64 {
            let more = s.failing_seeds - shown.len() as u64;
            let with_json = if s.failures_truncated() {
                format!("the lowest {} of them with --json", sweep::MAX_KEPT)
            } else {
                "all of them with --json".to_owned()
            };
            writeln!(out, "  … and {more} more ({with_json})").unwrap();
        }
    }
    if let Some(first) = s.first_failing_seed {
        writeln!(out).unwrap();
        writeln!(out, "lowest failing seed {first}").unwrap();
        let report = s.failures.iter().find(|f| f.seed == first);
        for finding in report.map_or(&[][..], |f| &f.findings[..]) {
            writeln!(out, "  finding {finding}").unwrap();
        }
        if o.faults != FaultMode::Scenario {
            for f in o.faults.schedule(scenario, first) {
                writeln!(out, "  random fault {}", describe(&f)).unwrap();
            }
        }
        writeln!(
            out,
            "repro     {}",
            repro(scenario, first, &o.faults, generic)
        )
        .unwrap();
        writeln!(
            out,
            "step      {} step {} --seed {first}{}{generic}",
            super::invocation(),
            crate::repro::shell_quote(&scenario.file),
            crate::repro::faults_flags(&o.faults)
        )
        .unwrap();
        if o.faults == FaultMode::Random && super::shrink::writable_seed(first) {
            writeln!(
                out,
                "shrink    {}{generic}",
                super::shrink::command(&scenario.file, first)
            )
            .unwrap();
        }
    }
    out
}

/// What a sweep never got to test, in plain words.
fn untested(s: &SweepSummary) -> Vec<String> {
    let m = s.milestone_counts();
    let mut out = Vec::new();
    if s.seeds == 0 {
        return out;
    }
    if s.inconclusive == s.seeds {
        out.push("no seed had a write reach the storage: this sweep judged nothing".to_owned());
    }
    if m["holder_paused_past_lease"] == 0 {
        out.push(
            "no seed paused a holder past its lease: this sweep did not test fencing".to_owned(),
        );
    } else if m["zombie_write_sent"] == 0 {
        out.push(
            "no seed sent a write under a grant no longer current: the fence was never tested"
                .to_owned(),
        );
    }
    out
}

fn seed_line(f: &SeedReport) -> String {
    let kinds: Vec<&str> = f.kinds.iter().map(|k| k.as_str()).collect();
    format!(
        "seed {:<8} {:<9} {:<10} {} stale, {} accepted, {} rejected, {}, trace {}{}",
        f.seed,
        f.verdict.as_str(),
        f.outcome.as_str(),
        f.stale_writes,
        f.accepted_writes,
        f.rejected_writes,
        plural(f.faults, "fault"),
        f.trace_hash,
        if kinds.is_empty() && f.broken.is_empty() {
            match &f.outcome {
                sim::Outcome::Crashed { message, .. } => format!("  ({message})"),
                timed_out @ sim::Outcome::TimedOut { .. } => format!("  ({timed_out})"),
                _ => String::new(),
            }
        } else {
            let broken = f.broken.iter().map(|p| format!("not {p}"));
            let all: Vec<String> = kinds.iter().map(|k| k.to_string()).chain(broken).collect();
            format!("  ({})", all.join(", "))
        }
    )
}

/// `--exhaustive`: counts the search before building or running any of it,
/// then runs its injection sets as a sweep runs seeds (streamed, stopped by
/// a signal, resumed from its `--json` output).
fn exhaustive(
    runs: &sweep::Runs,
    scenario: &Scenario,
    options: &mut Options,
    resumed: Option<Resumed>,
) -> Status {
    let depth = options.exhaustive.expect("an exhaustive search");
    let shard = options.sweep.shard;
    // A resumed search was allowed its runs when it started.
    let cap = match &resumed {
        Some(_) => u64::MAX,
        None => options.max_runs.unwrap_or(exhaustive::MAX_RUNS),
    };
    let planned = exhaustive::plan_within(runs, scenario, scenario.seed, depth, shard, cap);
    let baseline = match &planned {
        Ok(plan) => &plan.baseline,
        Err(too_large) => &too_large.baseline,
    };
    // Injections into a run that already fails would all look like they
    // break the design.
    if let Some(reason) = exhaustive::already_fails(baseline) {
        eprintln!(
            "error: {} already fails without injections (seed {}): {reason}; every \
             injection would look like it breaks the design. `{}` shows why; remove the \
             faults that break it, or fix the design, then search again",
            escape::terminal(&scenario.file),
            scenario.seed,
            escape::terminal(&super::repro_command(&scenario.file, scenario.seed)),
        );
        return Status::Invalid;
    }
    let in_shard = |sets: u64| {
        if shard == Shard::WHOLE {
            String::new()
        } else {
            format!(" (shard {shard} of {sets} in all)")
        }
    };
    let plan = match planned {
        Ok(plan) => plan,
        Err(t) => {
            let one = if depth == 2 {
                ", or use --exhaustive 1"
            } else {
                ""
            };
            eprintln!(
                "error: --exhaustive {depth} over a menu of {} injections makes {} runs{}, \
                 more than {cap}: pass --max-runs {} to make them anyway, split them with \
                 --shard K/N{one} (nothing was run but the scenario's own run)",
                t.menu_len,
                t.runs,
                in_shard(t.sets),
                t.runs
            );
            return Status::Invalid;
        }
    };
    let injections = Arc::new(exhaustive::Injections {
        seed: scenario.seed,
        menu: plan.menu,
        depth,
    });
    if let Some(r) = &resumed {
        if let Recorded::Exhaustive { menu, .. } = r.faults {
            if menu != injections.menu.len() as u64 {
                eprintln!(
                    "error: the search being resumed had a menu of {menu} injections; the \
                     scenario's own run now gives {}: the scenario or fencesim changed",
                    injections.menu.len()
                );
                return Status::Invalid;
            }
        }
    }
    eprintln!(
        "exhaustive: {} injections in the menu, depth {depth}: {} runs{}",
        injections.menu.len(),
        plan.runs,
        in_shard(plan.sets)
    );
    options.sweep.seeds = 0..injections.sets();
    options.sweep.faults = FaultMode::Exhaustive(injections.clone());
    let search = Search {
        injections,
        baseline: plan.baseline,
    };
    sweep_or_search(runs, scenario, options, resumed, Some(&search))
}

fn exhaustive_human(scenario: &Scenario, depth: u8, r: &ExhaustiveResult) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    writeln!(
        out,
        "exhaustive {} ({}), seed {}, depth {depth}: {} injections in the menu, {} tried in {}",
        escape::terminal(&scenario.name),
        escape::terminal(&scenario.file),
        scenario.seed,
        r.menu.len(),
        r.tried,
        seconds(r.wall.as_nanos() as u64)
    )
    .unwrap();
    writeln!(
        out,
        "baseline  {} without injections",
        r.baseline.verdict.as_str()
    )
    .unwrap();
    if r.breaking.is_empty() {
        writeln!(out, "verdict   no injection breaks the design").unwrap();
        return out;
    }
    writeln!(
        out,
        "verdict   {} injections break the design (add them to [[faults]] to replay):",
        r.breaking.len()
    )
    .unwrap();
    for (faults, report) in &r.breaking {
        let kinds: Vec<&str> = report.kinds.iter().map(|k| k.as_str()).collect();
        let what = if report.outcome.is_error() {
            report.outcome.as_str().to_owned()
        } else {
            kinds.join(", ")
        };
        let faults: Vec<String> = faults.iter().map(describe).collect();
        writeln!(out, "  {what:<16} {}", faults.join(" + ")).unwrap();
    }
    out
}

/// A progress bar on stderr, drawn only when stderr is a terminal, at most
/// ten times a second.
struct Progress {
    enabled: bool,
    total: u64,
    started: Instant,
    last: Mutex<Instant>,
}

impl Progress {
    fn new(total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            enabled: std::io::stderr().is_terminal(),
            total,
            started: now,
            last: Mutex::new(now),
        }
    }

    fn update(&self, done: u64, total: u64) {
        if !self.enabled {
            return;
        }
        let total = if total > 0 { total } else { self.total };
        let mut last = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < Duration::from_millis(100) && done < total {
            return;
        }
        *last = Instant::now();
        let width = 30;
        let filled = (done * width / total.max(1)) as usize;
        let rate = done as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        eprint!(
            "\r[{}{}] {done}/{total} {rate:.0}/s ",
            "#".repeat(filled),
            ".".repeat(width as usize - filled)
        );
    }

    fn finish(&self) {
        if self.enabled {
            eprint!("\r{}\r", " ".repeat(70));
        }
    }
}
