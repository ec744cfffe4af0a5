//! The `fencesim` command line: `run`, `check`, `explore`, `merge`, `shrink`,
//! `step`, `report`, `designs`, `margin`, `compare`, `audit`, `new`.
//!
//! Exit codes, for every subcommand: 0 expectations met (without `[expect]`:
//! no violation); 1 an expectation failed or a violation was found; 2 invalid
//! input (a bad file or flag); 3 an internal error, a crashed run, or
//! non-determinism; 4 inconclusive (no write reached the storage, a scripted
//! fault never fired, or the run was cut short, and `[expect]` did not say
//! so).

mod audit;
mod check;
mod compare;
mod explore;
mod files;
mod margin;
mod merge;
mod new;
mod output;
mod report;
mod run;
mod shrink;
mod step;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::design::catalog::Registry;
pub use crate::repro::{invocation, repro_command, repro_command_faults, reproducible_command};
use crate::scenario::{self, Scenario};

/// Exit status of a command. Ordered by severity, which is not the order of
/// the codes: ok < inconclusive < failed < invalid < internal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Expectations met.
    Ok = 0,
    /// An expectation failed or a violation was found.
    Failed = 1,
    /// Invalid input.
    Invalid = 2,
    /// Internal error, crash or non-determinism.
    Internal = 3,
    /// The run judged nothing, a scripted fault never fired, or the run was
    /// cut short, and `[expect]` did not say so.
    Inconclusive = 4,
    /// A sweep stopped by SIGINT (128 + 2), after writing what it completed.
    Interrupted = 130,
    /// A sweep stopped by SIGTERM (128 + 15), after writing what it completed.
    Terminated = 143,
}

impl Status {
    fn severity(self) -> u8 {
        match self {
            Status::Ok => 0,
            Status::Inconclusive => 1,
            Status::Failed => 2,
            Status::Invalid => 3,
            Status::Internal => 4,
            Status::Interrupted => 5,
            Status::Terminated => 6,
        }
    }
}

impl PartialOrd for Status {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Status {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.severity().cmp(&other.severity())
    }
}

impl From<crate::runner::RunStatus> for Status {
    fn from(s: crate::runner::RunStatus) -> Status {
        match s {
            crate::runner::RunStatus::Ok => Status::Ok,
            crate::runner::RunStatus::Inconclusive => Status::Inconclusive,
            crate::runner::RunStatus::Failed => Status::Failed,
            crate::runner::RunStatus::Error => Status::Internal,
        }
    }
}

impl From<Status> for ExitCode {
    fn from(s: Status) -> ExitCode {
        ExitCode::from(s as u8)
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "fencesim",
    version,
    about = "Deterministic simulation testing for distributed locks, leases and fencing tokens",
    after_help = "Exit codes: 0 expectations met, 1 expectation failed or violation found, \
                  2 invalid input, 3 internal error, crashed or timed-out run, or \
                  non-determinism, 4 inconclusive (no write reached the storage, a \
                  scripted fault never fired, or the run was cut short, and [expect] \
                  did not say so); 130/143 a sweep stopped by SIGINT/SIGTERM."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Wall-clock budget of each run (`60s`, `5m`, `none`): a run still going
    /// after it (a design or statement that never returns) ends as an error
    /// with its repro command; a sweep goes on with the next seed.
    #[arg(long, global = true, value_name = "DURATION", default_value = "60s",
          value_parser = parse_run_timeout)]
    run_timeout: RunTimeout,
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

/// `fencesim step --help` ends with the walk's keys.
fn step_keys() -> String {
    format!(
        "Keys on a terminal (a command per line, then Enter):\n{}",
        crate::report::step::HELP
    )
}

/// `--run-timeout`: a duration, or none.
#[derive(Clone, Copy, Debug)]
struct RunTimeout(Option<std::time::Duration>);

fn parse_run_timeout(text: &str) -> Result<RunTimeout, String> {
    if text == "none" {
        return Ok(RunTimeout(None));
    }
    match humantime::parse_duration(text) {
        Ok(d) if !d.is_zero() => Ok(RunTimeout(Some(d))),
        Ok(_) => Err("a run timeout must be longer than 0 (or `none`)".to_owned()),
        Err(e) => Err(format!(
            "expected a duration such as 60s or 5m, or `none`: {e}"
        )),
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one scenario with one seed: verdict, violations, lanes, repro command.
    Run {
        /// The scenario file.
        file: PathBuf,
        /// Seed (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Print one JSON object instead of the human report.
        #[arg(long)]
        json: bool,
        /// Show message deliveries in the lanes too.
        #[arg(long)]
        deliveries: bool,
        /// Width of each lane, in characters.
        #[arg(long, default_value_t = 36, value_parser = clap::value_parser!(u16).range(8..=200))]
        width: u16,
        /// Also write the journal (the whole trace) to this file, as JSON Lines.
        #[arg(long, value_name = "FILE")]
        trace: Option<PathBuf>,
        /// Replace the --trace file if it exists (a link is replaced, never
        /// followed).
        #[arg(long)]
        force: bool,
        /// `random`: the scenario's faults plus the seed's random schedule,
        /// exactly as `explore` ran that seed (same trace hash); `guided`:
        /// as a guided sweep ran it (with `--corpus`); `scenario`: only
        /// the scenario's own faults.
        #[arg(long, value_enum, default_value_t = FaultsArg::Scenario)]
        faults: FaultsArg,
        #[command(flatten)]
        replay: Replay,
    },
    /// Sweep seeds with random faults (or only the scenario's), or inject
    /// faults exhaustively; list the failing seeds and their repro commands.
    Explore {
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
    },
    /// Merge the `explore --json` outputs of a sweep's shards: the failing
    /// seeds in seed order, one summary, and the seeds not run yet (gaps).
    Merge {
        /// The shards' output files (one per shard; a resumed shard's
        /// output instead of the stopped one's).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print the merged JSON lines (as `explore --json` prints them)
        /// instead of the human summary.
        #[arg(long)]
        json: bool,
    },
    /// Shrink a failing seed's fault schedule and write it as a scenario.
    Shrink {
        /// The scenario file.
        file: PathBuf,
        /// The failing seed.
        #[arg(long)]
        seed: u64,
        /// Where to write the shrunk scenario (default: STEM-seed-N-shrunk.toml).
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
    },
    /// Run every scenario under the paths (twice, to check determinism) and
    /// print a table.
    Check {
        /// Scenario files or directories (default: scenarios/).
        paths: Vec<PathBuf>,
    },
    /// Walk through one run event by event, each explained with who
    /// believes what (keys: ? on the walk's screen; piped: every event on
    /// a line, numbered as in the journal).
    #[command(after_help = step_keys())]
    Step {
        /// The scenario file.
        file: PathBuf,
        /// Seed (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Width of each lane, in characters (default: the lanes fit the
        /// terminal: `COLUMNS`, else the tty's size, else 80 columns).
        #[arg(long, value_parser = clap::value_parser!(u16).range(8..=200))]
        width: Option<u16>,
        /// `random`: step through the seed as `explore` ran it (the
        /// scenario's faults plus the seed's random schedule); `guided`: as
        /// a guided sweep ran it (with `--corpus`); `scenario`: only the
        /// scenario's own faults.
        #[arg(long, value_enum, default_value_t = FaultsArg::Scenario)]
        faults: FaultsArg,
        #[command(flatten)]
        replay: Replay,
    },
    /// Write reports of scenarios into a directory: NAME.md (Mermaid),
    /// NAME.html (timeline), NAME.svg (figure), NAME.trace.json (Perfetto),
    /// NAME.jsonl, index.
    Report {
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
    },
    /// List the designs and their keys.
    Designs,
    /// Create a crate to write your own design in: Cargo.toml,
    /// .cargo/config.toml, a design, its command line, two scenarios, a
    /// test and a README.
    New(new::NewArgs),
    /// For each fault that applies, the smallest magnitude (to the
    /// millisecond) at which the verdict flips, found by bisection.
    Margin {
        /// The scenario file.
        file: PathBuf,
        /// Seed of every run (default: the scenario's `seed`).
        #[arg(long)]
        seed: Option<u64>,
        /// Print one JSON object per row (JSON lines).
        #[arg(long)]
        json: bool,
        /// Allow up to N runs (default: 5000); more is refused before any run.
        #[arg(long, value_name = "N")]
        max_runs: Option<u64>,
    },
    /// Sweep the scenario over every lock design (or --designs) with the
    /// same seeds, and print one row per design.
    Compare(compare::CompareArgs),
    /// Find where a code base takes distributed locks and whether their
    /// writes are fenced (a lint by patterns, not a proof); each finding
    /// names the bundled scenario that shows what can go wrong.
    Audit {
        /// Source files or directories to scan.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Print one JSON object per finding (JSON lines).
        #[arg(long)]
        json: bool,
    },
}

/// `--faults`: which faults a seed runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum FaultsArg {
    /// The scenario's faults plus the seed's random schedule.
    Random,
    /// Only the scenario's faults.
    Scenario,
    /// The scenario's faults plus the seed's guided schedule (`--corpus`).
    Guided,
    /// The scenario's faults plus at most D faults at change points (`--depth`).
    Depth,
}

/// The flags that replay a seed of a guided or depth-bounded sweep, shared
/// by `run`, `shrink`, `step` and `report`.
#[derive(clap::Args, Clone, Debug, Default)]
pub(super) struct Replay {
    /// With `--faults guided`: the corpus file the sweep drew from.
    #[arg(long, value_name = "FILE")]
    corpus: Option<PathBuf>,
    /// With `--faults guided`: only the corpus file's first N entries
    /// (the ones the sweep loaded; it appends the ones it found).
    #[arg(long, value_name = "N", requires = "corpus")]
    corpus_entries: Option<usize>,
    /// With `--faults depth`: the depth bound D the sweep ran with.
    #[arg(long, value_name = "D", value_parser = clap::value_parser!(u32).range(1..=16))]
    depth: Option<u32>,
    /// A seed of `explore --generic`: drop the scenario's `[[faults]]` and
    /// `[explore]` table first, as that sweep did.
    #[arg(long)]
    generic: bool,
}

/// `--faults` with `--corpus` and `--corpus-entries`: the fault mode, once
/// the scenario whose nodes the corpus's faults name is loaded.
#[derive(Clone, Debug)]
pub(super) struct FaultsChoice {
    arg: FaultsArg,
    corpus: Option<PathBuf>,
    entries: Option<usize>,
    depth: Option<u32>,
    generic: bool,
}

impl FaultsChoice {
    fn new(arg: FaultsArg, replay: Replay) -> FaultsChoice {
        FaultsChoice {
            arg,
            corpus: replay.corpus,
            entries: replay.corpus_entries,
            depth: replay.depth,
            generic: replay.generic,
        }
    }

    /// `--generic`: the scenario without its `[[faults]]` and `[explore]`
    /// table (see [`crate::explore::generic`]), else as loaded.
    pub(super) fn scenario(&self, scenario: Scenario) -> Scenario {
        if self.generic {
            crate::explore::generic::scenario(&scenario)
        } else {
            scenario
        }
    }

    /// Whether `--generic` was given (or a resumed sweep was one).
    pub(super) fn generic(&self) -> bool {
        self.generic
    }

    /// Explore with the generic table: a resumed `--generic` sweep.
    pub(super) fn set_generic(&mut self) {
        self.generic = true;
    }

    /// ` --generic` for a repro command when it was given, else nothing.
    pub(super) fn generic_flag(&self) -> &'static str {
        if self.generic {
            " --generic"
        } else {
            ""
        }
    }

    /// `random`, `scenario` or `guided`, as `--faults` spells it.
    pub(super) fn name(&self) -> &'static str {
        match self.arg {
            FaultsArg::Random => "random",
            FaultsArg::Scenario => "scenario",
            FaultsArg::Guided => "guided",
            FaultsArg::Depth => "depth",
        }
    }

    /// The mode for `scenario`, or `None` after printing why (exit 2): a
    /// guided mode without `--corpus`, `--corpus` without it, or a bad
    /// corpus file (named with its line and column).
    pub(super) fn mode(&self, scenario: &Scenario) -> Option<crate::explore::sweep::FaultMode> {
        use crate::explore::sweep::FaultMode;
        match (self.arg, self.depth) {
            (FaultsArg::Depth, Some(d)) if self.corpus.is_none() => {
                let depth = crate::explore::depth::Depth::new(scenario, d);
                return Some(FaultMode::Depth(std::sync::Arc::new(depth)));
            }
            (FaultsArg::Depth, Some(_)) => {
                eprintln!("error: --corpus is for --faults guided");
                return None;
            }
            (_, Some(_)) => {
                eprintln!("error: --depth is for --faults depth");
                return None;
            }
            (_, None) => {}
        }
        if self.generic && self.arg == FaultsArg::Scenario {
            eprintln!(
                "error: --generic drops the scenario's faults: use it with --faults random, guided or depth"
            );
            return None;
        }
        match (self.arg, &self.corpus) {
            (FaultsArg::Random, None) => Some(FaultMode::Random),
            (FaultsArg::Scenario, None) => Some(FaultMode::Scenario),
            (FaultsArg::Guided, Some(path)) => {
                match crate::explore::guided::Corpus::load(path, scenario, self.entries) {
                    Ok(corpus) => Some(FaultMode::Guided(std::sync::Arc::new(corpus))),
                    Err(e) => {
                        eprint!("{e}");
                        None
                    }
                }
            }
            (FaultsArg::Guided, None) => {
                eprintln!(
                    "error: --guided (--faults guided) needs --corpus FILE: the corpus to draw from (a missing file is an empty one)"
                );
                None
            }
            (_, Some(_)) => {
                eprintln!("error: --corpus is for --faults guided");
                None
            }
            (FaultsArg::Depth, None) => {
                eprintln!("error: --faults depth needs --depth D (the bound the sweep ran with)");
                None
            }
        }
    }
}

/// Runs the `fencesim` command line, with the bundled designs, and returns
/// its exit code.
pub fn main() -> ExitCode {
    main_with(Registry::builtin())
}

/// Runs the whole command line (`run`, `check`, `explore`, `shrink`, `step`,
/// `report`, `designs`) with the designs of `registry`, and returns its exit
/// code: a crate that writes its own designs gets every command in a few
/// lines.
///
/// ```no_run
/// use fencesim::design::catalog::Registry;
///
/// fn main() -> std::process::ExitCode {
///     let mut registry = Registry::builtin();
///     // registry.add_lock(MyLock); registry.add_storage(MyStorage); …
///     fencesim::cli::main_with(registry)
/// }
/// ```
///
/// The repro commands it prints name the running program: `cargo run
/// --release --example NAME --` under `cargo run --example NAME`, else the
/// program's own name.
pub fn main_with(registry: Registry) -> ExitCode {
    end_quietly_on_a_closed_pipe();
    crate::repro::name_program_from_args();
    run_args(&registry, std::env::args_os()).into()
}

/// `fencesim step FILE | head` ends the program when `head` stops reading,
/// as it ends any Unix filter, instead of a panic in `println!`: Rust
/// ignores SIGPIPE, so a write to a closed pipe fails with EPIPE, which
/// `println!` turns into a panic. Restoring the default action makes the
/// write end the process (exit by SIGPIPE) and nothing is printed.
fn end_quietly_on_a_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: called once at the start of `main`, before any thread is
    // started; SIG_DFL is a valid action for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Runs the command line `args` (the program's name first, as in
/// `std::env::args_os`) with the designs of `registry`: [`main_with`]
/// without the process around it, for tests and drivers.
pub fn run_args<I, T>(registry: &Registry, args: I) -> Status
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors to
            // stderr with status 2, as the contract says. An error quotes
            // the argument: shown escaped, like everything a user did not
            // write to fencesim.
            if e.use_stderr() {
                eprint!("{}", crate::escape::terminal_lines(&e.render().to_string()));
                return Status::Invalid;
            }
            let _ = e.print();
            return Status::Ok;
        }
    };
    sim::run::set_default_run_timeout(cli.run_timeout.0);
    let status = match cli.command {
        Command::Run {
            file,
            seed,
            json,
            deliveries,
            width,
            trace,
            force,
            faults,
            replay,
        } => run::run(
            registry,
            &file,
            run::Options {
                seed,
                json,
                deliveries,
                width: width as usize,
                trace,
                force,
                faults: FaultsChoice::new(faults, replay),
            },
        ),
        Command::Explore {
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
        } => {
            let defaults = crate::explore::sweep::SweepOptions::default();
            let given = explore::Given {
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
            let sweep = crate::explore::sweep::SweepOptions {
                seeds: seeds.unwrap_or(defaults.seeds),
                jobs: jobs.unwrap_or(defaults.jobs).max(1),
                shard: shard.unwrap_or(defaults.shard),
                faults: crate::explore::sweep::FaultMode::Random,
            };
            let options = explore::Options {
                faults: FaultsChoice::new(
                    faults.unwrap_or(FaultsArg::Random),
                    Replay {
                        corpus,
                        corpus_entries: None,
                        depth,
                        generic,
                    },
                ),
                corpus_out,
                sweep,
                json,
                exhaustive,
                max_runs,
                resume,
                given,
                rules: crate::explore::sweep::StopRules { until, time },
            };
            explore::explore(registry, &file, options)
        }
        Command::Shrink {
            file,
            seed,
            out,
            force,
            faults,
            replay,
        } => shrink::shrink(
            registry,
            &file,
            shrink::Options {
                seed,
                out,
                force,
                faults: FaultsChoice::new(faults, replay),
            },
        ),
        Command::Merge { files, json } => merge::merge(&files, json),
        Command::Check { paths } => check::check(registry, &paths),
        Command::Step {
            file,
            seed,
            width,
            faults,
            replay,
        } => step::step(
            registry,
            &file,
            seed,
            width.map(usize::from),
            FaultsChoice::new(faults, replay),
        ),
        Command::Report {
            paths,
            seed,
            out,
            force,
            faults,
            replay,
        } => report::report(
            registry,
            &paths,
            seed,
            &out,
            force,
            FaultsChoice::new(faults, replay),
        ),
        Command::Designs => {
            print!("{}", output::designs(registry));
            Status::Ok
        }
        Command::Margin {
            file,
            seed,
            json,
            max_runs,
        } => margin::margin(registry, &file, seed, json, max_runs),
        Command::Compare(args) => compare::compare(registry, &args),
        Command::Audit { paths, json } => audit::audit(&paths, json),
        Command::New(args) => new::new(registry, &args),
    };
    status
}

/// What `designs` prints for `registry`: every design, by role, with its
/// keys.
pub fn designs_text(registry: &Registry) -> String {
    output::designs(registry)
}

/// Loads a scenario; on failure prints the error (file, line, column and
/// the offending line) to stderr and returns `None`: the caller's status is
/// then [`Status::Invalid`].
fn load(registry: &Registry, file: &std::path::Path) -> Option<Scenario> {
    scenario::load_file(registry, file)
        .map_err(|e| eprint!("{e}"))
        .ok()
}
