//! Worker processes: a sweep's seeds run in child processes that the sweep
//! kills and replaces, as a fuzzer's fork server does, so that a run's
//! budgets hold and leave nothing behind.
//!
//! A run that outlives `--run-timeout` cannot be stopped inside a process
//! (Rust cannot interrupt a thread): in-process it is only abandoned, and
//! keeps a core and its memory until the process ends. An allocation past
//! what the machine has aborts the whole process. In a worker, the sweep
//! kills the process at the budget, and a memory budget
//! ([`setrlimit`](libc::setrlimit) on the worker's data segment, which
//! counts every anonymous mapping) makes an allocation past it end only the
//! worker ("memory allocation of N bytes failed"). Either way the seed is
//! reported (timed out; an error naming the budget) with its repro command,
//! and a fresh worker takes the next seed.
//!
//! The worker is the program that runs the command line
//! ([`crate::cli::main_with`], so a user's own binary with its own designs
//! gets it too) started again with [`ENV`] set: `main_with` checks it before
//! parsing any argument and calls [`serve`]. The protocol, over the
//! worker's stdin and a copy of its stdout (its own stdout goes to stderr,
//! so that a design's `println!` cannot garble it), one JSON object per
//! line:
//!
//! 1. the sweep sends a [`Header`]: the scenario's file, a fingerprint of
//!    the scenario as the sweep has it (its TOML), the fault mode, the
//!    memory budget and whether every seed's trace is hashed;
//! 2. the worker loads the file with its registry (as is, or with the
//!    generic table of `--generic`) and answers `{"ready": true}` when it
//!    has the sweep's scenario, else `{"error": "..."}`;
//! 3. then, for each seed the sweep writes (a number on a line; the sweep
//!    keeps a few sent ahead, so that the worker never waits for it), the
//!    worker runs it on a fresh thread of its own (each seed's thread
//!    starts the next one's as it ends), replays it if it fails (as
//!    in-process), and answers its [`SeedReport`] as one line, in the
//!    order sent. Answers are written together while more seeds wait, but
//!    within [`FLUSH_EVERY`] of a seed's end: the sweep charges the time
//!    since the last answer to the oldest seed unanswered;
//! 4. `stream SEED` instead of a seed: the worker runs it as a seed, and
//!    writes each event's JSON line as the run journals it (sent within
//!    [`FLUSH_EVERY`]). The sweep sends it to a fresh worker for a seed
//!    that timed out, reads the lines for the same budget and kills the
//!    worker: the journal of the run up to where it hung
//!    ([`Worker::prefix`]).
//!
//! A worker that dies (a signal, an abort) with one seed in hand ends that
//! seed as an error, with what it last wrote to stderr; with several, they
//! are sent again one at a time to fresh workers, until one dies alone
//! with its seed.
//!
//! Library callers, tests and modes whose faults depend on state the
//! worker does not have (guided, depth-bounded and exhaustive searches) run
//! seeds in-process, each on a fresh thread: the same runs, but a timed-out
//! run's thread is abandoned and there is no memory budget.

use std::io::{BufRead, BufReader, Read as _, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sim::Outcome;

use super::sweep::{Divergence, FaultMode, Runs, SeedReport};
use crate::design::catalog::Registry;
use crate::oracle::{Counters, Milestones, Verdict, ViolationKind};
use crate::scenario::Scenario;

/// The environment variable that makes a program calling
/// [`crate::cli::main_with`] a sweep's worker.
pub const ENV: &str = "FENCESIM_WORKER";

/// How a sweep starts its worker processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workers {
    /// The program to start: one whose `main` calls
    /// [`crate::cli::main_with`] with the designs the scenario names.
    pub program: PathBuf,
    /// Each worker's memory budget, in bytes (`--run-memory`); `None`: none.
    pub memory: Option<u64>,
}

/// The program that runs the command line, once [`crate::cli::main_with`]
/// has said it is one (`None` for library callers and tests).
pub fn this_program() -> Option<&'static PathBuf> {
    PROGRAM.get()
}

/// Records that this process's own executable runs the command line, and
/// can be started again as a worker.
pub(crate) fn set_this_program() {
    if let Ok(exe) = std::env::current_exe() {
        let _ = PROGRAM.set(exe);
    }
}

static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// `256 MiB` for a budget in bytes.
pub fn size_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (unit, size) in UNITS {
        if bytes >= size && bytes % size == 0 {
            return format!("{}{unit}", bytes / size);
        }
    }
    format!("{bytes} bytes")
}

/// `512MiB`, `2GiB`, `64KiB` or a number of bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let digits = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("expected a size such as 512MiB or 2GiB, not `{text}`"))?;
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" | "K" | "KB" => 1 << 10,
        "MiB" | "M" | "MB" => 1 << 20,
        "GiB" | "G" | "GB" => 1 << 30,
        "TiB" | "T" | "TB" => 1 << 40,
        other => return Err(format!("unknown size unit `{other}`: use KiB, MiB or GiB")),
    };
    number
        .checked_mul(scale)
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("a size must be more than 0 and fit in 64 bits, not `{text}`"))
}

/// The first line a sweep sends its worker.
#[derive(Serialize, Deserialize)]
pub struct Header {
    /// The scenario's file, as loaded (relative to the working directory,
    /// which the worker shares).
    pub file: String,
    /// [`fingerprint`] of the scenario as the sweep runs it.
    pub fingerprint: String,
    /// The scenario as the sweep runs it, as TOML: for a scenario that is
    /// not its file's (another design swapped in, say).
    pub toml: String,
    /// `random` or `scenario`.
    pub faults: String,
    /// Hash every seed's journal.
    pub trace_hashes: bool,
    /// The worker's memory budget, in bytes.
    pub memory: Option<u64>,
}

/// The scenario's TOML (every value explicit), hashed: two loads of a file
/// give the same scenario when their fingerprints agree.
pub fn fingerprint(scenario: &Scenario) -> String {
    fingerprint_of(&crate::scenario::write::to_toml(scenario))
}

fn fingerprint_of(toml: &str) -> String {
    use std::hash::{Hash as _, Hasher as _};
    // SipHash with fixed keys: the same in the sweep and in its workers,
    // which are one program.
    let mut hasher = std::hash::DefaultHasher::new();
    toml.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}

/// Whether a sweep of `mode` can run in workers: its faults depend on the
/// scenario and the seed only.
pub fn can_run(mode: &FaultMode) -> bool {
    matches!(mode, FaultMode::Random | FaultMode::Scenario)
}

/// A running worker process, as the sweep's thread that feeds it sees it.
pub struct Worker {
    child: Child,
    to: ChildStdin,
    from: BufReader<ChildStdout>,
    /// The end of what the worker wrote to stderr (also passed on to ours).
    stderr: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
    /// The node whose handler the oldest unanswered seed's run was last
    /// said to be running.
    running: Option<String>,
}

/// A worker's line while a seed runs long: the node whose handler it is
/// running.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Running {
    running: String,
}

/// How long a seed runs before its worker says which node's handler it is
/// in (and again whenever that changes).
pub const SAY_RUNNING_AFTER: Duration = Duration::from_millis(100);

/// The journal of a run that timed out, up to where it hung, as a worker
/// streamed it ([`Worker::prefix`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prefix {
    /// Its events.
    pub events: u64,
    /// Its hash, as `Journal::hash` gives it.
    pub trace_hash: String,
    /// The true time of its last event.
    pub sim_time: Duration,
}

/// What a worker answered for a seed.
pub enum Answer {
    /// Its report.
    Report(Box<SeedReport>),
    /// Nothing within the time given: the run is still going.
    Late,
    /// The worker died (or answered what is no report):
    /// [`Worker::why_gone`] says why.
    Gone,
}

/// Whether `from` has something to read within `ms` milliseconds.
fn poll_in(from: &impl std::os::fd::AsRawFd, ms: u128) -> bool {
    #[cfg(unix)]
    {
        let mut fd = libc::pollfd {
            fd: from.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = ms.min(i32::MAX as u128) as libc::c_int;
        loop {
            // SAFETY: one pollfd, owned here, for the duration of the call.
            let n = unsafe { libc::poll(&mut fd, 1, ms) };
            if n >= 0 {
                // Readable, or hung up: either way a read will not block.
                return n > 0;
            }
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return true;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (from, ms);
        true
    }
}

/// Lines of a worker's stderr kept to say why it died.
const STDERR_LINES: usize = 20;

impl Worker {
    /// Starts a worker for `scenario` under `mode`, and waits until it has
    /// loaded the scenario.
    pub fn start(
        workers: &Workers,
        scenario: &Scenario,
        mode: &FaultMode,
        trace_hashes: bool,
    ) -> Result<Worker, String> {
        let mut child = Command::new(&workers.program)
            .env(ENV, "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a worker ({}): {e}", workers.program.display()))?;
        let to = child.stdin.take().expect("piped");
        let from = BufReader::with_capacity(64 << 10, child.stdout.take().expect("piped"));
        let err = child.stderr.take().expect("piped");
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let kept = stderr.clone();
        let reader = std::thread::Builder::new()
            .name("fencesim-worker-stderr".to_owned())
            .spawn(move || pass_on(err, &kept))
            .expect("spawn a worker's stderr reader");
        let mut worker = Worker {
            child,
            to,
            from,
            stderr,
            reader: Some(reader),
            running: None,
        };
        let toml = crate::scenario::write::to_toml(scenario);
        let header = Header {
            file: scenario.file.clone(),
            fingerprint: fingerprint_of(&toml),
            toml,
            faults: mode.as_str().to_owned(),
            trace_hashes,
            memory: workers.memory,
        };
        let line = serde_json::to_string(&header).expect("a header is plain data");
        let answer = worker
            .send(&line)
            .and_then(|()| worker.receive())
            .map_err(|()| format!("a worker died before it was ready: {}", worker.died()))?;
        let answer: serde_json::Value = serde_json::from_str(&answer)
            .map_err(|e| format!("a worker answered `{answer}`: {e}"))?;
        match answer["error"].as_str() {
            None if answer["ready"] == true => Ok(worker),
            None => Err(format!("a worker answered {answer}")),
            Some(e) => Err(format!("a worker could not load the scenario: {e}")),
        }
    }

    /// Sends `seed` to run after the ones sent before; `false` when the
    /// worker is gone.
    pub fn send_seed(&mut self, seed: u64) -> bool {
        self.send(&seed.to_string()).is_ok()
    }

    /// The report of the oldest seed sent and not answered yet, waiting at
    /// most `within` (`None`: for ever).
    pub fn answer(&mut self, within: Option<Duration>) -> Answer {
        let deadline = within.map(|w| std::time::Instant::now() + w);
        loop {
            if let Some(deadline) = deadline {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if self.from.buffer().is_empty()
                    && !poll_in(self.from.get_ref(), left.as_micros().div_ceil(1000))
                {
                    return Answer::Late;
                }
            }
            let Ok(line) = self.receive() else {
                return Answer::Gone;
            };
            if let Ok(Running { running }) = serde_json::from_str::<Running>(&line) {
                self.running = Some(running);
                continue;
            }
            self.running = None;
            return match serde_json::from_str::<Wire>(&line) {
                Ok(wire) => Answer::Report(Box::new(wire.into_report())),
                Err(_) => Answer::Gone,
            };
        }
    }

    /// Replays `seed`, which ran past `budget`, in a fresh worker that
    /// streams each event it journals, for `budget` at most; then kills it.
    /// The run is deterministic: its events are those of the run that
    /// timed out, up to where it hung. `None` when no worker could start.
    pub fn prefix(
        workers: &Workers,
        scenario: &Scenario,
        mode: &FaultMode,
        seed: u64,
        budget: Duration,
    ) -> Option<Prefix> {
        let deadline = std::time::Instant::now() + budget;
        let mut w = Worker::start(workers, scenario, mode, false).ok()?;
        w.send(&format!("stream {seed}")).ok()?;
        let mut lines = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if w.from.buffer().is_empty()
                && !poll_in(w.from.get_ref(), left.as_micros().div_ceil(1000))
            {
                break;
            }
            let Ok(line) = w.receive() else { break };
            if line.starts_with("{\"seq\":") {
                lines.push(line.trim_end().to_owned());
            } else if serde_json::from_str::<Running>(&line).is_err() {
                // Its report: the replay ended (it should not).
                break;
            }
        }
        // Dropped: killed and reaped.
        drop(w);
        let t_ns = lines.last().and_then(|l| {
            let event: serde_json::Value = serde_json::from_str(l).ok()?;
            event["t_ns"].as_u64()
        });
        Some(Prefix {
            events: lines.len() as u64,
            trace_hash: sim::journal::hash_lines(lines.iter().map(String::as_str)),
            sim_time: Duration::from_nanos(t_ns.unwrap_or(0)),
        })
    }

    /// The node whose handler the oldest unanswered seed's run was last
    /// said to be running (a run that has run for [`SAY_RUNNING_AFTER`]).
    pub fn running_node(&mut self) -> Option<String> {
        self.running.take()
    }

    /// Why the worker is gone (killed first, if it was not): how it ended
    /// and the last line it wrote to stderr.
    pub fn why_gone(&mut self) -> String {
        let _ = self.child.kill();
        self.died()
    }

    fn send(&mut self, line: &str) -> Result<(), ()> {
        writeln!(self.to, "{line}")
            .and_then(|()| self.to.flush())
            .map_err(|_| ())
    }

    fn receive(&mut self) -> Result<String, ()> {
        let mut line = String::new();
        match self.from.read_line(&mut line) {
            Ok(0) | Err(_) => Err(()),
            Ok(_) => Ok(line),
        }
    }

    /// Why the worker is gone, once it is: how it ended and the end of its
    /// stderr. A process that ran out of its memory budget says so.
    fn died(&mut self) -> String {
        let status = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        let lines = self.stderr.lock().map(|l| l.clone()).unwrap_or_default();
        let how = match status {
            Ok(status) => ended(status),
            Err(e) => format!("cannot be waited for ({e})"),
        };
        match last_words(&lines) {
            Some(line) => format!("the worker process {how}: {line}"),
            None => format!("the worker process {how}"),
        }
    }
}

impl Drop for Worker {
    /// A worker no longer needed (the sweep is done with it, or gave up on
    /// its run) is killed and reaped: nothing is left running.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// `was killed by signal 9`, `exited with status 3`.
fn ended(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        if let Some(signal) = status.signal() {
            let name = match signal {
                libc::SIGKILL => " (SIGKILL)",
                libc::SIGABRT => " (SIGABRT)",
                libc::SIGSEGV => " (SIGSEGV)",
                libc::SIGBUS => " (SIGBUS)",
                _ => "",
            };
            return format!("was killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => "ended".to_owned(),
    }
}

/// Passes a child's stderr on to ours, line by line, keeping the last
/// [`STDERR_LINES`].
fn pass_on(from: impl std::io::Read, kept: &Mutex<Vec<String>>) {
    let mut from = BufReader::new(from);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        match from.by_ref().read_until(b'\n', &mut bytes) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let _ = std::io::stderr().write_all(&bytes);
        let line = String::from_utf8_lossy(&bytes).into_owned();
        if let Ok(mut kept) = kept.lock() {
            if kept.len() == STDERR_LINES {
                kept.remove(0);
            }
            kept.push(line);
        }
    }
}

/// What a dead process's stderr says of its end: the failed allocation
/// when there was one (a backtrace's lines may follow it), else the last
/// line that says anything.
fn last_words(lines: &[String]) -> Option<&str> {
    let said = |l: &&String| !l.trim().is_empty();
    lines
        .iter()
        .rev()
        .find(|l| out_of_memory(l))
        .or_else(|| lines.iter().rev().find(said))
        .map(|l| l.trim())
}

/// Why a worker that died running a seed did, as that seed's outcome: a
/// memory budget that ran out is named with its size.
pub fn died_outcome(why: &str, memory: Option<u64>) -> Outcome {
    let message = match memory {
        Some(budget) if out_of_memory(why) => format!(
            "memory budget exceeded: the run needed more than --run-memory {} ({why})",
            size_text(budget)
        ),
        _ => why.to_owned(),
    };
    Outcome::Crashed {
        node: None,
        message,
    }
}

/// Whether a dead worker's last words say an allocation failed.
fn out_of_memory(why: &str) -> bool {
    why.contains("memory allocation of") || why.contains("out of memory")
}

/// Limits this process's data segment (every private anonymous mapping,
/// thread stacks included, since Linux 4.7) to `bytes`: an allocation past
/// it fails, and Rust aborts the process.
pub fn limit_memory(bytes: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        let limit = libc::rlimit {
            rlim_cur: bytes as libc::rlim_t,
            rlim_max: bytes as libc::rlim_t,
        };
        // SAFETY: setrlimit reads the struct it is given, nothing else.
        if unsafe { libc::setrlimit(libc::RLIMIT_DATA, &limit) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    #[cfg(not(unix))]
    let _ = bytes;
    Ok(())
}

/// The environment variable that makes `run` the child of a `run` that
/// watches it: its value is the memory budget in bytes (or `none`).
pub const RUN_ENV: &str = "FENCESIM_RUN_CHILD";

/// How a command run again in a child process ended.
pub enum Supervised {
    /// It exited with this status, having printed what it had to.
    Exited(i32),
    /// It died (a signal, an abort) before printing anything: why.
    Died(String),
}

/// In the child of [`run_in_child`]: the memory budget it must hold to
/// (`Some(None)`: none); `None` in any other process.
pub fn run_child_budget() -> Option<Option<u64>> {
    let value = std::env::var(RUN_ENV).ok()?;
    Some(value.parse().ok())
}

/// Runs this process's command line again in a child process of
/// `workers.program` with [`RUN_ENV`] set, sharing stdin and stdout, and
/// waits for it. So a run whose allocations pass the memory budget ends the
/// child, not the command, which then says so.
pub fn run_in_child(workers: &Workers) -> Result<Supervised, String> {
    let budget = workers.memory.map_or("none".to_owned(), |b| b.to_string());
    let mut child = Command::new(&workers.program)
        .args(std::env::args_os().skip(1))
        .env(RUN_ENV, budget)
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", workers.program.display()))?;
    let err = child.stderr.take().expect("piped");
    let kept = Arc::new(Mutex::new(Vec::new()));
    let reader = {
        let kept = kept.clone();
        std::thread::spawn(move || pass_on(err, &kept))
    };
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for the run: {e}"))?;
    let _ = reader.join();
    if let (Some(code), false) = (status.code(), killed(status)) {
        return Ok(Supervised::Exited(code));
    }
    let lines = kept.lock().map(|l| l.clone()).unwrap_or_default();
    let how = ended(status);
    Ok(Supervised::Died(match last_words(&lines) {
        Some(line) => format!("the process making the run {how}: {line}"),
        None => format!("the process making the run {how}"),
    }))
}

fn killed(status: ExitStatus) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt as _;
        status.signal().is_some()
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        false
    }
}

/// A worker's side of the protocol (see the module's docs): loads the
/// scenario with `registry`, then runs seeds until its stdin closes.
/// Returns the process's exit status.
pub fn serve(registry: &Registry) -> std::process::ExitCode {
    // The protocol gets its own copy of stdout; stdout itself goes to
    // stderr, so that what a design prints cannot garble a line.
    let (mut input, mut out) = match protocol_io() {
        Ok(io) => io,
        Err(e) => {
            eprintln!("error: a worker cannot set up its output: {e}");
            return std::process::ExitCode::from(3);
        }
    };
    let mut header = String::new();
    if !matches!(input.read_line(&mut header), Ok(n) if n > 0) {
        return std::process::ExitCode::from(3);
    };
    let (scenario, mode, runs) = match ready(registry, &header) {
        Ok(ready) => ready,
        Err(e) => {
            let _ = writeln!(out, "{}", serde_json::json!({ "error": e }));
            return std::process::ExitCode::from(3);
        }
    };
    if writeln!(out, "{}", serde_json::json!({ "ready": true })).is_err() || out.flush().is_err() {
        return std::process::ExitCode::from(3);
    }
    let (done, finished) = std::sync::mpsc::channel();
    let serving = Arc::new(Serving {
        scenario,
        mode,
        runs,
        input: Mutex::new(input),
        out: Mutex::new((out, std::time::Instant::now())),
        running: Mutex::new(None),
        done,
    });
    // Answers held back while more seeds wait go out within FLUSH_EVERY
    // even when the next seed runs long: the sweep charges the time since
    // the last answer to the oldest seed unanswered.
    // A seed that runs long says which node's handler it is in, so that
    // one killed at the budget is named with it.
    let flusher = serving.clone();
    let _ = std::thread::Builder::new()
        .name("fencesim-flush".to_owned())
        .spawn(move || loop {
            std::thread::sleep(FLUSH_EVERY);
            let say = flusher.running.lock().ok().and_then(|mut running| {
                let (watch, since, said) = running.as_mut()?;
                let node = watch.running();
                if since.elapsed() < SAY_RUNNING_AFTER || node.is_none() || node == *said {
                    return None;
                }
                said.clone_from(&node);
                node
            });
            if let Ok(mut out) = flusher.out.lock() {
                let (out, flushed) = &mut *out;
                if let Some(node) = say {
                    let line = serde_json::to_string(&Running { running: node });
                    let _ = writeln!(out, "{}", line.expect("a name is plain data"));
                }
                if !out.buffer().is_empty() {
                    let _ = out.flush();
                    *flushed = std::time::Instant::now();
                }
            }
        });
    next_seed(serving);
    finished.recv().unwrap_or(std::process::ExitCode::from(3))
}

/// What the threads of a worker share: each runs one seed, then starts
/// the thread of the next.
struct Serving {
    scenario: Scenario,
    mode: FaultMode,
    runs: Runs,
    input: Mutex<BufReader<std::fs::File>>,
    /// The answers, and when they were last flushed.
    out: Mutex<(std::io::BufWriter<std::fs::File>, std::time::Instant)>,
    /// The seed running, if one is.
    running: Mutex<Option<Seed>>,
    /// The worker's exit status, once its stdin is done (or broken).
    done: std::sync::mpsc::Sender<std::process::ExitCode>,
}

/// A worker's seed while it runs: its thread's watch, since when, and the
/// node last said to be running.
type Seed = (Arc<sim::Watch>, std::time::Instant, Option<String>);

/// Starts the thread that runs the next seed sent (one fresh thread per
/// seed). Each hands over to the next as it ends, rather than a thread
/// that waits for each: on a busy machine every wake-up waits its turn.
fn next_seed(serving: Arc<Serving>) {
    let spawned = std::thread::Builder::new()
        .name("fencesim-seed".to_owned())
        .spawn({
            let serving = serving.clone();
            move || serve_one(serving)
        });
    if let Err(e) = spawned {
        eprintln!("error: a worker cannot start a thread: {e}");
        let _ = serving.done.send(std::process::ExitCode::from(3));
    }
}

/// Runs the next seed on this (fresh) thread and answers its report, then
/// starts the next seed's thread.
fn serve_one(serving: Arc<Serving>) {
    let mut line = String::new();
    let read = match serving.input.lock() {
        Ok(mut input) => input.read_line(&mut line).unwrap_or(0),
        Err(_) => 0,
    };
    if read == 0 {
        // Its stdin closed: the sweep is done with it.
        let _ = serving.done.send(std::process::ExitCode::SUCCESS);
        return;
    }
    // `stream SEED`: the seed again, each event's line written as it is
    // journaled (a run that timed out, replayed for its journal's prefix).
    let (stream, seed) = match line.trim().strip_prefix("stream ") {
        Some(seed) => (true, seed),
        None => (false, line.trim()),
    };
    let Ok(seed) = seed.parse::<u64>() else {
        eprintln!("error: a worker was sent `{line}`, not a seed");
        let _ = serving.done.send(std::process::ExitCode::from(3));
        return;
    };
    let s = &serving;
    if let Ok(mut running) = s.running.lock() {
        *running = Some((sim::Watch::install(), std::time::Instant::now(), None));
    }
    if stream {
        let out = serving.clone();
        let mut line = String::with_capacity(256);
        sim::journal::set_sink(Some(Box::new(move |event: &sim::Event| {
            line.clear();
            event.write_json(&mut line);
            line.push('\n');
            // The flusher sends it within FLUSH_EVERY.
            if let Ok(mut out) = out.out.lock() {
                let _ = out.0.write_all(line.as_bytes());
            }
        })));
    }
    let report = s.runs.report_on_this_thread(&s.scenario, seed, &s.mode);
    if stream {
        sim::journal::set_sink(None);
    }
    if let Ok(mut running) = s.running.lock() {
        *running = None;
    }
    let wire = serde_json::to_string(&Wire::of(&report)).expect("a report is plain data");
    // Answers go out together while more seeds wait (a write that wakes
    // the sweep costs more than a short seed), and before the worker
    // would wait for a seed.
    let waiting = serving
        .input
        .lock()
        .is_ok_and(|input| !input.buffer().is_empty() || poll_in(input.get_ref(), 0));
    let written = serving.out.lock().map_err(|_| ()).and_then(|mut out| {
        let (out, flushed) = &mut *out;
        writeln!(out, "{wire}").map_err(|_| ())?;
        if !waiting || flushed.elapsed() >= FLUSH_EVERY {
            out.flush().map_err(|_| ())?;
            *flushed = std::time::Instant::now();
        }
        Ok(())
    });
    if written.is_err() {
        let _ = serving.done.send(std::process::ExitCode::SUCCESS);
        return;
    }
    next_seed(serving);
}

/// How long a worker may keep answers before it sends them.
pub const FLUSH_EVERY: Duration = Duration::from_millis(10);

/// The scenario, fault mode and runs a worker's `header` asks for.
fn ready(registry: &Registry, header: &str) -> Result<(Scenario, FaultMode, Runs), String> {
    let header: Header =
        serde_json::from_str(header).map_err(|e| format!("a bad header ({e}): {header}"))?;
    if let Some(bytes) = header.memory {
        limit_memory(bytes).map_err(|e| format!("cannot limit memory: {e}"))?;
    }
    let mode = match header.faults.as_str() {
        "random" => FaultMode::Random,
        "scenario" => FaultMode::Scenario,
        other => return Err(format!("a worker cannot run `{other}` faults")),
    };
    // The file as loaded (or with `--generic`'s table) keeps the line of
    // each fault; the TOML is for a scenario the sweep changed otherwise.
    let same = |s: &Scenario| fingerprint(s) == header.fingerprint;
    let loaded = crate::scenario::load_file(registry, header.file.as_ref()).ok();
    let scenario = match loaded {
        Some(s) if same(&s) => s,
        Some(s) if same(&super::generic::scenario(&s)) => super::generic::scenario(&s),
        _ => crate::scenario::load_str(registry, &header.file, &header.toml)
            .map_err(|e| format!("{e}"))
            .and_then(|s| match same(&s) {
                true => Ok(s),
                false => Err("its TOML does not load back as the same scenario".to_owned()),
            })?,
    };
    let runs = Runs {
        trace_hashes: header.trace_hashes,
        ..Runs::default()
    };
    Ok((scenario, mode, runs))
}

/// The protocol's input (stdin) and output (a copy of stdout; stdout
/// itself then writes to stderr).
type Io = (BufReader<std::fs::File>, std::io::BufWriter<std::fs::File>);

fn protocol_io() -> std::io::Result<Io> {
    #[cfg(unix)]
    {
        use std::os::fd::FromRawFd as _;
        // SAFETY: dup and dup2 on the process's standard descriptors, before
        // any thread reads or writes them; each duplicate is owned by its
        // File.
        unsafe {
            let (input, output) = (libc::dup(0), libc::dup(1));
            if input < 0 || output < 0 || libc::dup2(2, 1) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok((
                BufReader::new(std::fs::File::from_raw_fd(input)),
                std::io::BufWriter::with_capacity(64 << 10, std::fs::File::from_raw_fd(output)),
            ))
        }
    }
    #[cfg(not(unix))]
    {
        Err(std::io::Error::other("worker processes need a Unix"))
    }
}

/// A [`SeedReport`] as a worker sends it.
#[derive(Serialize, Deserialize)]
struct Wire {
    seed: u64,
    verdict: Verdict,
    outcome: WireOutcome,
    counters: Counters,
    kinds: Vec<ViolationKind>,
    events: u64,
    sim_time_ns: u64,
    trace_hash: String,
    faults: usize,
    unfired_faults: u64,
    milestones: Milestones,
    findings: Vec<String>,
    broken: Vec<String>,
    reproduced: Option<bool>,
    nondeterministic: Option<Divergence>,
    cut_short_unexplained: Option<String>,
    idle_process: bool,
}

/// An [`Outcome`] as a worker sends it.
#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum WireOutcome {
    Completed,
    Stalled,
    TimeLimit,
    EventLimit,
    Crashed {
        node: Option<String>,
        message: String,
    },
    TimedOut {
        budget_ns: u64,
        node: Option<String>,
    },
}

impl Wire {
    fn of(r: &SeedReport) -> Wire {
        Wire {
            seed: r.seed,
            verdict: r.verdict,
            outcome: match &r.outcome {
                Outcome::Completed => WireOutcome::Completed,
                Outcome::Stalled => WireOutcome::Stalled,
                Outcome::TimeLimit => WireOutcome::TimeLimit,
                Outcome::EventLimit => WireOutcome::EventLimit,
                Outcome::Crashed { node, message } => WireOutcome::Crashed {
                    node: node.clone(),
                    message: message.clone(),
                },
                Outcome::TimedOut { budget, node } => WireOutcome::TimedOut {
                    budget_ns: budget.as_nanos() as u64,
                    node: node.clone(),
                },
            },
            counters: r.counters,
            kinds: r.kinds.clone(),
            events: r.events,
            sim_time_ns: r.sim_time.as_nanos() as u64,
            trace_hash: r.trace_hash.clone(),
            faults: r.faults,
            unfired_faults: r.unfired_faults,
            milestones: r.milestones,
            findings: r.findings.clone(),
            broken: r.broken.iter().map(|p| (*p).to_owned()).collect(),
            reproduced: r.reproduced,
            nondeterministic: r.nondeterministic.as_deref().cloned(),
            cut_short_unexplained: r.cut_short_unexplained.clone(),
            idle_process: r.idle_process,
        }
    }

    fn into_report(self) -> SeedReport {
        let always = crate::scenario::model::ALWAYS;
        SeedReport {
            seed: self.seed,
            verdict: self.verdict,
            outcome: match self.outcome {
                WireOutcome::Completed => Outcome::Completed,
                WireOutcome::Stalled => Outcome::Stalled,
                WireOutcome::TimeLimit => Outcome::TimeLimit,
                WireOutcome::EventLimit => Outcome::EventLimit,
                WireOutcome::Crashed { node, message } => Outcome::Crashed { node, message },
                WireOutcome::TimedOut { budget_ns, node } => Outcome::TimedOut {
                    budget: Duration::from_nanos(budget_ns),
                    node,
                },
            },
            counters: self.counters,
            kinds: self.kinds,
            events: self.events,
            sim_time: Duration::from_nanos(self.sim_time_ns),
            trace_hash: self.trace_hash,
            faults: self.faults,
            unfired_faults: self.unfired_faults,
            milestones: self.milestones,
            findings: self.findings,
            broken: self
                .broken
                .iter()
                .filter_map(|p| always.into_iter().find(|a| a == p))
                .collect(),
            reproduced: self.reproduced,
            nondeterministic: self.nondeterministic.map(Box::new),
            cut_short_unexplained: self.cut_short_unexplained,
            idle_process: self.idle_process,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_written() {
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("0MiB").is_err());
        assert!(parse_size("12 parsecs").is_err());
        assert_eq!(size_text(256 << 20), "256MiB");
        assert_eq!(size_text(3 << 30), "3GiB");
    }
}
