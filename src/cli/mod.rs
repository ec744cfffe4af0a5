//! The `fencesim` command line: `run`, `check`, `explore`, `merge`, `shrink`,
//! `step`, `report`, `designs`, `margin`, `compare`, `audit`, `new`.
//!
//! Exit codes, for every subcommand: 0 expectations met (without `[expect]`:
//! no violation); 1 an expectation failed or a violation was found; 2 invalid
//! input (a bad file or flag); 3 an internal error, a crashed run, or
//! non-determinism; 4 inconclusive (no write reached the storage, a scripted
//! fault never fired, or the run was cut short, and `[expect]` did not say
//! so).

#[cfg(feature = "audit")]
mod audit;
mod check;
mod compare;
mod designs;
mod explore;
// Half of what `files` does is for `report` (its manifest, its file names).
#[cfg_attr(not(feature = "report"), allow(dead_code, unused_imports))]
mod files;
mod margin;
mod merge;
mod new;
mod output;
#[cfg(feature = "report")]
mod report;
mod run;
mod shrink;
mod step;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::design::catalog::Registry;
use crate::explore::sweep::Runs;
pub(crate) use crate::repro::{invocation, repro_command, reproducible_command};
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
    /// The status a command exited with, as its code: a code outside the
    /// contract is an internal error.
    fn from_code(code: i32) -> Status {
        match code {
            0 => Status::Ok,
            1 => Status::Failed,
            2 => Status::Invalid,
            4 => Status::Inconclusive,
            130 => Status::Interrupted,
            143 => Status::Terminated,
            _ => Status::Internal,
        }
    }

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
    /// Memory budget of each run (`512MiB`, `2GiB`, `none`): a run that
    /// allocates past it ends as an error with its repro command; a sweep
    /// goes on with the next seed. Enforced on the worker processes that
    /// run `explore`'s seeds and on the process that makes `run`'s run.
    #[arg(long, global = true, value_name = "SIZE", default_value = "2GiB",
          value_parser = parse_run_memory)]
    run_memory: RunMemory,
}

/// `--run-memory`: a size in bytes, or none.
#[derive(Clone, Copy, Debug)]
struct RunMemory(Option<u64>);

fn parse_run_memory(text: &str) -> Result<RunMemory, String> {
    if text == "none" {
        return Ok(RunMemory(None));
    }
    crate::explore::worker::parse_size(text).map(|n| RunMemory(Some(n)))
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
    Run(run::RunArgs),
    /// Sweep seeds with random faults (or only the scenario's), or inject
    /// faults exhaustively; list the failing seeds and their repro commands.
    Explore(explore::ExploreArgs),
    /// Merge the `explore --json` outputs of a sweep's shards: the failing
    /// seeds in seed order, one summary, and the seeds not run yet (gaps).
    Merge(merge::MergeArgs),
    /// Shrink a failing seed's fault schedule and write it as a scenario.
    Shrink(shrink::ShrinkArgs),
    /// Run every scenario under the paths (twice, to check determinism) and
    /// print a table.
    Check(check::CheckArgs),
    /// Walk through one run event by event, each explained with who
    /// believes what (keys: ? on the walk's screen; piped: every event on
    /// a line, numbered as in the journal).
    #[command(after_help = step::keys())]
    Step(step::StepArgs),
    /// Write reports of scenarios into a directory: NAME.md (Mermaid),
    /// NAME.html (timeline), NAME.svg (figure), NAME.trace.json (Perfetto),
    /// NAME.jsonl, index.
    #[cfg(feature = "report")]
    Report(report::ReportArgs),
    /// List the designs and their keys.
    Designs(designs::DesignsArgs),
    /// Create a crate to write your own design in: Cargo.toml,
    /// .cargo/config.toml, a design, its command line, two scenarios, a
    /// test and a README (with --async: an async lock client instead of the
    /// design).
    New(new::NewArgs),
    /// For each fault that applies, the smallest magnitude (to the
    /// millisecond) at which the verdict flips, found by bisection.
    Margin(margin::MarginArgs),
    /// Sweep the scenario over every lock design (or --designs) with the
    /// same seeds, and print one row per design.
    Compare(compare::CompareArgs),
    /// Find where a code base takes distributed locks and whether their
    /// writes are fenced (a lint by patterns, not a proof); each finding
    /// names the bundled scenario that shows what can go wrong.
    #[cfg(feature = "audit")]
    Audit(audit::AuditArgs),
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
    /// A seed of `explore --workloads`: vary its workload as that sweep did.
    #[arg(long)]
    workloads: bool,
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
    workloads: bool,
}

impl FaultsChoice {
    fn new(arg: FaultsArg, replay: Replay) -> FaultsChoice {
        FaultsChoice {
            arg,
            corpus: replay.corpus,
            entries: replay.corpus_entries,
            depth: replay.depth,
            generic: replay.generic,
            workloads: replay.workloads,
        }
    }

    /// `--generic`: the scenario without its `[[faults]]` and `[explore]`
    /// table (see [`crate::explore::generic`]), else as loaded.
    /// With `--workloads`, its seeds' workloads varied too (see
    /// [`crate::explore::workload`]).
    pub(super) fn scenario(&self, scenario: Scenario) -> Scenario {
        let scenario = if self.generic {
            crate::explore::generic::scenario(&scenario)
        } else {
            scenario
        };
        if self.workloads {
            crate::explore::workload::turned_on(scenario)
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

    /// Vary each seed's workload: a resumed `--workloads` sweep.
    pub(super) fn set_workloads(&mut self) {
        self.workloads = true;
    }

    /// ` --generic` and ` --workloads` for a repro command, those that were
    /// given.
    pub(super) fn generic_flag(&self) -> &'static str {
        match (self.generic, self.workloads) {
            (false, false) => "",
            (true, false) => " --generic",
            (false, true) => " --workloads",
            (true, true) => " --generic --workloads",
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
    pub(super) fn mode(
        &self,
        scenario: &Scenario,
        runs: &Runs,
    ) -> Option<crate::explore::sweep::FaultMode> {
        use crate::explore::sweep::FaultMode;
        match (self.arg, self.depth) {
            (FaultsArg::Depth, Some(d)) if self.corpus.is_none() => {
                let baseline = runs.run(scenario, scenario.seed);
                let depth = crate::explore::depth::Depth::of_run(&baseline, d);
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
    // Started again by a sweep to run its seeds: no command line to parse.
    if std::env::var_os(crate::explore::worker::ENV).is_some() {
        return crate::explore::worker::serve(&registry);
    }
    crate::explore::worker::set_this_program();
    end_quietly_on_a_closed_pipe();
    crate::repro::name_program_from_args();
    run_args(&registry, std::env::args_os()).into()
}

/// The commands that a cargo feature brings, by name and feature.
const COMMANDS_BEHIND_FEATURES: &[(&str, &str)] = &[("report", "report"), ("audit", "audit")];

/// For a subcommand this build lacks because its cargo feature is off: a
/// note naming the feature.
fn missing_command(e: &clap::Error) -> Option<String> {
    if e.kind() != clap::error::ErrorKind::InvalidSubcommand {
        return None;
    }
    let given = match e.get(clap::error::ContextKind::InvalidSubcommand) {
        Some(clap::error::ContextValue::String(s)) => s.clone(),
        _ => return None,
    };
    let (name, feature) = COMMANDS_BEHIND_FEATURES.iter().find(|(n, _)| *n == given)?;
    Some(format!(
        "note: `{name}` is in fencesim's `{feature}` cargo feature, which this build leaves \
         out: build with it (`features = [\"{feature}\"]` on the fencesim dependency, or \
         `cargo build --features {feature}`)"
    ))
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
                if let Some(note) = missing_command(&e) {
                    eprintln!("{note}");
                }
                return Status::Invalid;
            }
            let _ = e.print();
            return Status::Ok;
        }
    };
    // Every run a command makes has this budget. Under `main_with`, the
    // program can start itself again to run seeds in worker processes.
    let runs = &Runs {
        workers: crate::explore::worker::this_program().map(|program| {
            crate::explore::worker::Workers {
                program: program.clone(),
                memory: cli.run_memory.0,
            }
        }),
        ..Runs::within(cli.run_timeout.0)
    };
    match cli.command {
        Command::Run(args) => run::run(registry, args, runs),
        Command::Explore(args) => explore::explore(registry, args, runs),
        Command::Shrink(args) => shrink::shrink(registry, args, runs),
        Command::Merge(args) => merge::merge(args),
        Command::Check(args) => check::check(registry, args, runs),
        Command::Step(args) => step::step(registry, args, runs),
        #[cfg(feature = "report")]
        Command::Report(args) => report::report(registry, args, runs),
        Command::Designs(args) => designs::designs(registry, &args),
        Command::Margin(args) => margin::margin(registry, args, runs),
        Command::Compare(args) => compare::compare(registry, &args, runs),
        #[cfg(feature = "audit")]
        Command::Audit(args) => audit::audit(args),
        Command::New(args) => new::new(registry, &args),
    }
}

/// What `designs` prints for `registry`: every design, by role, with its
/// keys.
pub fn designs_text(registry: &Registry) -> String {
    output::designs(registry)
}

/// What `designs --markdown` prints for `registry`: the design and client
/// tables of docs/format.md.
pub fn designs_markdown(registry: &Registry) -> String {
    designs::markdown(registry)
}

/// Loads a scenario; on failure prints the error (file, line, column and
/// the offending line) to stderr and returns `None`: the caller's status is
/// then [`Status::Invalid`].
fn load(registry: &Registry, file: &std::path::Path) -> Option<Scenario> {
    scenario::load_file(registry, file)
        .map_err(|e| eprint!("{e}"))
        .ok()
}
