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
//! Before a failing seed is reported it is run again alone, on a fresh
//! thread; one whose journal differs is reported as non-determinism (the
//! first event that differs, in both runs), never as a violation.
//!
//! Exit status, by the contract's order (3 > 2 > 1 > 4 > 0):
//! - 3 when any seed crashed, outlived `--run-timeout` or `--run-memory`,
//!   or did not replay (a panic, a hang, a leak or non-determinism in a
//!   design or the world is a bug the sweep cannot judge), even if others
//!   violate: the summary still lists both, each with its repro;
//! - 2 for a bad file or flag;
//! - 1 when any seed violates;
//! - 4 when every seed was inconclusive (no write reached the storage in
//!   any of them: "no violation" would be vacuous), when a seed was cut
//!   short (stalled, or at the time or event limit) with no fault of its
//!   own to explain it and the scenario's `[expect] outcome` does not say
//!   how runs end (`cut_short_unexplained`, the lowest in
//!   `first_cut_short` with what its code waited on), or when a hosted
//!   process client never acquired the lock in any seed (`idle_process`);
//! - 0 otherwise. Seeds that a fault of their own cut short (a crash for
//!   good, a pause or partition to the end) are counted apart
//!   (`cut_short`), as are inconclusive seeds and seeds where a scenario
//!   fault never fired, but they are not failures: the oracle judges what
//!   they did up to that point. The summary says plainly when no seed
//!   reached the situation the sweep was meant to test.

mod injected;
mod progress;
mod resuming;
mod signal;
mod summary;

use injected::{exhaustive, exhaustive_human};
use progress::Progress;
use resuming::{read_resumed, recorded_settings, resumed};
use signal::{Signal, Stop};
use summary::{human, mechanism_line, stopped_note};

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::{load, repro_command, FaultsArg, FaultsChoice, Replay, Status};
use crate::design::catalog::Registry;
use crate::escape;
use crate::explore::exhaustive::{self, ExhaustiveResult};
use crate::explore::generic::{self, Reproduced};
use crate::explore::resume::{self, Recorded, Resumed, Sessions};
use crate::explore::sweep::{
    self, FaultMode, SeedReport, StopRules, SweepEvent, SweepOptions, SweepSummary,
};
use crate::explore::{describe, guided};
use crate::scenario::Scenario;

/// `fencesim explore`'s flags.
#[derive(clap::Args, Debug)]
pub(super) struct ExploreArgs {
    /// The scenario file.
    file: PathBuf,
    /// Seeds to run: A..B (B excluded), A..=B or A [default: 0..1000].
    #[arg(long, value_parser = crate::explore::shard::parse_range)]
    seeds: Option<std::ops::Range<u64>>,
    /// Worker threads (default: one per core).
    #[arg(long)]
    jobs: Option<usize>,
    /// Run only the seeds s with s % N == K.
    #[arg(long, value_name = "K/N", value_parser = crate::explore::shard::Shard::parse)]
    shard: Option<crate::explore::shard::Shard>,
    /// `random`: the scenario's faults plus a random schedule per seed;
    /// `guided`: as --guided; `scenario`: only the scenario's faults
    /// [default: random].
    #[arg(long, value_enum)]
    faults: Option<FaultsArg>,
    /// Guided search: each seed runs a fresh random schedule or a
    /// mutation of an entry of the --corpus file (as loaded at start);
    /// schedules that reach a new milestone combination are appended to
    /// the corpus written at the end.
    #[arg(long, conflicts_with = "exhaustive")]
    guided: bool,
    /// With --guided: the corpus file to draw from (missing: empty) and,
    /// unless --corpus-out, to write the grown corpus to.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// With --guided: write the grown corpus here instead of to --corpus.
    #[arg(long, value_name = "FILE")]
    corpus_out: Option<PathBuf>,
    /// Depth-bounded search (after PCT): each seed draws 1 to D faults,
    /// all but the first right after an event drawn from the scenario's
    /// own run (1 to 16).
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=16),
          conflicts_with_all = ["exhaustive", "guided"])]
    depth: Option<u32>,
    /// Stream JSON lines: one per failing seed (in seed order), a
    /// checkpoint now and then, then a summary line.
    #[arg(long)]
    json: bool,
    /// Continue the stopped sweep whose `--json` output is FILE: run only
    /// the seeds it did not complete, and write the whole sweep's lines.
    #[arg(long, value_name = "FILE", conflicts_with = "exhaustive")]
    resume: Option<PathBuf>,
    /// Inject 1 fault (or every pair) from a menu at every event of the run.
    #[arg(long, value_name = "1|2", value_parser = clap::value_parser!(u8).range(1..=2))]
    exhaustive: Option<u8>,
    /// With --exhaustive: allow up to N runs (default: 10000).
    #[arg(long, value_name = "N", requires = "exhaustive")]
    max_runs: Option<u64>,
    /// Stop after N failing seeds: the lowest N of the range, the same
    /// whatever --jobs; seeds after the N-th are not counted.
    #[arg(long, value_name = "N", conflicts_with_all = ["exhaustive", "resume"],
          value_parser = parse_until)]
    until: Option<u64>,
    /// Stop taking new seeds after this much wall time (`30s`, `5m`);
    /// the seeds running finish, and the summary says which ran.
    #[arg(long, value_name = "DURATION", conflicts_with = "exhaustive",
          value_parser = parse_time_budget)]
    time: Option<std::time::Duration>,
    /// Drop the scenario's `[[faults]]` and `[explore]` table and explore
    /// with the generic table (every kind, 1 to 3 faults, maxima from
    /// the scenario's timeouts); count the failing seeds that reproduce
    /// the bug its `[expect]` describes (`mechanism`).
    #[arg(long, conflicts_with_all = ["exhaustive", "resume"])]
    generic: bool,
    /// Vary each seed's workload as well as its faults (more clients,
    /// work shorter and longer than the lease, renewals, lease checks,
    /// rounds, starts, slow and duplicated answers), swarmed as faults
    /// are; the repro commands carry `--workloads`.
    #[arg(long, conflicts_with_all = ["exhaustive", "resume"])]
    workloads: bool,
}

/// `explore --until`: a number of failing seeds, at least 1.
fn parse_until(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("the sweep stops after N failing seeds: N is 1 or more".to_owned()),
        Ok(n) => Ok(n),
        Err(_) => Err("expected a number of failing seeds, such as 1 or 10".to_owned()),
    }
}

/// `explore --time`: a wall-clock duration longer than 0.
fn parse_time_budget(text: &str) -> Result<std::time::Duration, String> {
    match humantime::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(d),
        Ok(_) => Err("a time budget must be longer than 0".to_owned()),
        Err(e) => Err(format!("expected a duration such as 30s or 5m: {e}")),
    }
}

impl ExploreArgs {
    /// The sweep these flags ask for, and the scenario file.
    fn options(self) -> (PathBuf, Options) {
        let ExploreArgs {
            file,
            seeds,
            jobs,
            shard,
            faults,
            guided,
            corpus,
            corpus_out,
            depth,
            json,
            resume,
            exhaustive,
            max_runs,
            until,
            time,
            generic,
            workloads,
        } = self;
        let defaults = SweepOptions::default();
        let given = Given {
            seeds: seeds.is_some(),
            shard: shard.is_some(),
            faults: faults.is_some() || guided || depth.is_some(),
        };
        let faults = if guided {
            Some(FaultsArg::Guided)
        } else if depth.is_some() {
            Some(FaultsArg::Depth)
        } else {
            faults
        };
        let sweep = SweepOptions {
            seeds: seeds.unwrap_or(defaults.seeds),
            jobs: jobs.unwrap_or(defaults.jobs).max(1),
            shard: shard.unwrap_or(defaults.shard),
            faults: FaultMode::Random,
        };
        let replay = Replay {
            corpus,
            corpus_entries: None,
            depth,
            generic,
            workloads,
        };
        let options = Options {
            faults: FaultsChoice::new(faults.unwrap_or(FaultsArg::Random), replay),
            corpus_out,
            sweep,
            json,
            exhaustive,
            max_runs,
            resume,
            given,
            rules: StopRules { until, time },
        };
        (file, options)
    }
}

struct Options {
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
    pub faults: FaultsChoice,
    /// `--corpus-out`: where a guided sweep writes its grown corpus
    /// (default: `--corpus`).
    pub corpus_out: Option<PathBuf>,
}

/// The sweep settings given on the command line.
#[derive(Clone, Copy, Debug, Default)]
struct Given {
    pub seeds: bool,
    pub shard: bool,
    pub faults: bool,
}

pub(super) fn explore(registry: &Registry, args: ExploreArgs, runs: &sweep::Runs) -> Status {
    let (file, mut options) = args.options();
    let file = file.as_path();
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
        return exhaustive(runs, &scenario, &mut options, resumed);
    }
    let Some(mode) = options.faults.mode(&scenario, runs) else {
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
    sweep(runs, &scenario, &options, resumed)
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
        line["workloads"] = crate::explore::workload::enabled(scenario).into();
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
        None if n("crashed") > 0 || n("timed_out") > 0 || n("nondeterministic_seeds") > 0 => {
            Status::Internal
        }
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
        None if n("crashed") > 0 || n("timed_out") > 0 || n("nondeterministic_seeds") > 0 => {
            Status::Internal
        }
        None if n("violations") > 0 || n("failing_seeds") > 0 => Status::Failed,
        // Not one seed judged anything: "no violation" would be vacuous.
        None if n("seeds") > 0 && n("inconclusive") == n("seeds") => Status::Inconclusive,
        // A seed its own code cut short tested less than it claims.
        None if n("cut_short_unexplained") > 0 => Status::Inconclusive,
        // The process under test never took the lock in any seed.
        None if n("seeds") > 0 && n("idle_process") == n("seeds") => Status::Inconclusive,
        None => Status::Ok,
    }
}
