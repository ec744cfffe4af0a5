//! Running a world: one seed, one madsim runtime.
//!
//! [`run()`] runs a seed on a fresh OS thread of its own, and so does
//! [`run_fresh`] (waited for, with no budget; a sweep runs each of its seeds
//! so). [`run_here`] runs it on the calling thread. A seed gives the same
//! journal on any fresh thread; on a thread that already ran something, it
//! gives that journal only if nothing in the run depends on what the thread
//! kept. The world and the bundled designs keep no std `HashMap` or
//! `HashSet` and no thread-local, and everything a run leaves on its thread
//! (the world, captured events, the last panic) is taken back when it ends;
//! but user code may: madsim seeds std's hasher keys once per OS thread
//! (from the first runtime that thread enters) and std advances them with
//! every map made there, so a process that iterates a `HashMap` sees
//! another order on a used thread, and a `thread_local!` or rand's
//! `thread_rng` keeps its state across runs. Hence a fresh thread per seed,
//! wherever a seed is run. A
//! panic inside an actor ends that run as [`Outcome::Crashed`], with the
//! journal up to the panic, and never the caller.
//!
//! A run may also be given a wall-clock budget ([`run_within`]); each
//! caller passes its own, and the process keeps none. Simulated time and the
//! event limit bound everything the world schedules, but not an actor that
//! never returns from a handler (a loop in a user's design, a statement that
//! never ends): Rust cannot interrupt that thread, so when the budget is
//! spent the caller stops waiting for it, abandons it, and gets
//! [`Outcome::TimedOut`], with the events the run journaled up to the hang
//! (the seed replayed, each event shown to the waiter as it is journaled,
//! [`crate::journal::set_sink`], within the same budget). The budget never
//! changes what a finished run did: it is only ever looked at by the thread
//! that waits. ([`run_here`] and
//! [`run_fresh`] have no budget: their caller is, or waits for, the thread
//! that runs; a sweep watches its own.)
//!
//! ```
//! use sim::{run, Actor, Context, Limits, Message, NodeId, Outcome, TimerId, WorldBuilder};
//! use std::time::Duration;
//! #[derive(Clone, Debug)]
//! struct Tick;
//! impl Message for Tick {
//!     fn summary(&self) -> String { "tick".into() }
//! }
//! struct Once { done: bool }
//! impl Actor<Tick> for Once {
//!     fn on_start(&mut self, ctx: &mut Context<'_, Tick>) { ctx.set_timer(Duration::from_secs(1), 0); }
//!     fn on_message(&mut self, _: &mut Context<'_, Tick>, _: NodeId, _: Tick) {}
//!     fn on_timer(&mut self, _: &mut Context<'_, Tick>, _: TimerId, _: u64) {
//!         sim::emit!("ticked");
//!         self.done = true;
//!     }
//!     fn is_done(&self) -> bool { self.done }
//! }
//! let result = run(7, || {
//!     let mut world = WorldBuilder::new(Limits::default());
//!     world.node("a", Once { done: false });
//!     world
//! });
//! assert_eq!(result.outcome, Outcome::Completed);
//! assert_eq!(result.journal.events()[0].kind, "ticked");
//! ```

use std::cell::{Cell, RefCell};
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex, Once};
use std::time::{Duration, Instant};

use crate::actor::Message;
use crate::journal::{Event, Journal};
use crate::world::{run_world, take_current, WorldBuilder};

/// Bounds on one run: every run ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Simulated (true) time limit.
    pub duration: Duration,
    /// Journal length limit.
    pub max_events: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            duration: Duration::from_secs(60),
            max_events: 100_000,
        }
    }
}

/// How a run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every actor finished its work and no message was in flight.
    Completed,
    /// Work was pending but nothing could ever happen again.
    Stalled,
    /// The simulated time limit was reached.
    TimeLimit,
    /// The journal reached its length limit.
    EventLimit,
    /// An actor (or the world's set-up) panicked.
    Crashed {
        /// The node whose handler panicked, if it was one.
        node: Option<String>,
        /// The panic message and location.
        message: String,
    },
    /// The run was still going when its wall-clock budget ran out; its
    /// thread was abandoned (it may still be running). Its journal is the
    /// events journaled up to the hang: [`run_within`] and a sweep's worker
    /// processes replay the seed to stream them (an in-process sweep, and
    /// [`run_within_used`], keep none). The budget is
    /// wall-clock time: replaying the seed without one shows where it
    /// hangs.
    TimedOut {
        /// The budget that ran out.
        budget: Duration,
        /// The node whose handler was running then, when the waiter could
        /// see it ([`run_within`] does; a worker process killed by a sweep
        /// tells nothing).
        node: Option<String>,
    },
}

impl Outcome {
    /// A short name: `completed`, `stalled`, `time_limit`, `event_limit`, `crashed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Stalled => "stalled",
            Outcome::TimeLimit => "time_limit",
            Outcome::EventLimit => "event_limit",
            Outcome::Crashed { .. } => "crashed",
            Outcome::TimedOut { .. } => "timed_out",
        }
    }

    /// Whether the run stopped before its work was done: it stalled, or hit
    /// the time or event limit.
    pub fn is_cut_short(&self) -> bool {
        matches!(
            self,
            Outcome::Stalled | Outcome::TimeLimit | Outcome::EventLimit
        )
    }

    /// Whether the run ended without a verdict of its own: it crashed or
    /// timed out. Such a run is an error, never a pass.
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Crashed { .. } | Outcome::TimedOut { .. })
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Crashed {
                node: Some(node),
                message,
            } => write!(f, "crashed: panic in {node}: {message}"),
            Outcome::Crashed {
                node: None,
                message,
            } => write!(f, "crashed: {message}"),
            Outcome::TimedOut { budget, node } => {
                write!(
                    f,
                    "timed_out: still running after {} of wall-clock time",
                    humanize(*budget)
                )?;
                match node {
                    Some(node) => write!(f, ", in a handler of {node}"),
                    None => Ok(()),
                }
            }
            other => f.write_str(other.as_str()),
        }
    }
}

/// What a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    /// The seed it ran with.
    pub seed: u64,
    /// How it ended.
    pub outcome: Outcome,
    /// Everything that happened.
    pub journal: Journal,
    /// Simulated time at the end.
    pub sim_time: Duration,
    /// Wall-clock time the run took (reporting only; never reaches the journal).
    pub wall_time: Duration,
    /// For each fault given to the world, in order: the true time at which
    /// it fired, or `None` when its trigger never came within the run (an
    /// `after` event that never happened, an `at` past the end).
    pub faults_fired: Vec<Option<Duration>>,
    /// For a run cut short (stalled, or at its time or event limit): what
    /// the live nodes' code was waiting on that nothing in the world would
    /// ever end ([`Actor::undriven_waits`](crate::Actor::undriven_waits)).
    /// Empty for any other outcome.
    pub waits: Vec<Wait>,
}

impl RunResult {
    /// The result of the run of `seed` begun at `started`, from its parts.
    fn of(seed: u64, started: Instant, parts: Parts) -> RunResult {
        let (outcome, journal, sim_time, faults_fired, waits) = parts;
        RunResult {
            seed,
            outcome,
            journal,
            sim_time,
            wall_time: started.elapsed(),
            faults_fired,
            waits,
        }
    }
}

/// A wait that nothing in the world will end, on one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Wait {
    /// The node.
    pub node: String,
    /// What its code waits on, in words.
    pub what: String,
}

impl fmt::Display for Wait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.node, self.what)
    }
}

/// Runs the world that `build` makes with `seed`, on a fresh thread, with
/// no wall-clock budget ([`run_within`] gives it one).
///
/// `build` runs on that thread, so actors need not be `Send`.
pub fn run<M, F>(seed: u64, build: F) -> RunResult
where
    M: Message,
    F: FnOnce() -> WorldBuilder<M> + Send + 'static,
{
    run_on_thread(seed, None, false, move || run_parts(seed, build))
}

/// [`run()`] with a wall-clock `budget`: when the run's thread has not
/// finished after `budget`, it is abandoned and the run ends as
/// [`Outcome::TimedOut`], with its journal up to the hang: the seed is
/// replayed on another thread that shows each event to the waiter as it
/// journals it, for the same budget, and abandoned in turn (a run that
/// times out takes twice its budget, and leaves two threads; a run that
/// finishes pays nothing). `None` waits for ever. `build` makes the world
/// for each.
pub fn run_within<M, F>(seed: u64, budget: Option<Duration>, build: F) -> RunResult
where
    M: Message,
    F: Fn() -> WorldBuilder<M> + Send + Sync + 'static,
{
    let build = Arc::new(build);
    let first = build.clone();
    let mut result = run_on_thread(seed, budget, false, move || run_parts(seed, &*first));
    if let (Outcome::TimedOut { .. }, Some(budget)) = (&result.outcome, budget) {
        // Its journal up to the hang: the seed again, each event shown to
        // this thread as it is journaled, for the same budget. Runs are
        // deterministic: the replay hangs where the run did.
        let replay = run_on_thread(seed, Some(budget), true, move || run_parts(seed, &*build));
        if let Outcome::TimedOut { .. } = replay.outcome {
            result.journal = replay.journal;
            result.sim_time = replay.sim_time;
        }
        result.wall_time += replay.wall_time;
    }
    result
}

/// [`run_within`] on a *used* thread: the thread first runs the world that
/// `build` makes with another seed (`seed + 1`), then this one, whose
/// result it returns. A seed whose journal differs from [`run()`]'s
/// depends on what a thread keeps between runs (std's hasher keys, a
/// thread-local): `check` compares the two. `budget` covers each run: the
/// thread is abandoned after twice that.
pub fn run_within_used<M, F>(seed: u64, budget: Option<Duration>, build: F) -> RunResult
where
    M: Message,
    F: Fn() -> WorldBuilder<M> + Send + 'static,
{
    run_on_thread(seed, budget.map(|b| b * 2), false, move || {
        let _ = run_parts(seed.wrapping_add(1), &build);
        run_parts(seed, build)
    })
}

/// What [`run_parts`] gives: outcome, journal, end time, faults' firings and
/// undriven waits.
type Parts = (Outcome, Journal, Duration, Vec<Option<Duration>>, Vec<Wait>);

/// Runs `job` on a thread of its own, waiting at most `budget` for it.
/// With `stream`, the thread shows each event to this one as it journals
/// it, and a run that times out keeps its journal up to then.
fn run_on_thread(
    seed: u64,
    budget: Option<Duration>,
    stream: bool,
    job: impl FnOnce() -> Parts + Send + 'static,
) -> RunResult {
    install_panic_hook();
    let started = Instant::now();
    let (done, result) = mpsc::sync_channel(1);
    let (watching, watched) = mpsc::sync_channel(1);
    // A copy of each event: only a replay of a run that timed out pays it.
    let prefix: Option<Arc<Mutex<Option<Vec<Event>>>>> =
        stream.then(|| Arc::new(Mutex::new(Some(Vec::new()))));
    let shown = prefix.clone();
    let handle = std::thread::Builder::new()
        .name(format!("{THREAD_PREFIX}{seed}"))
        .spawn(move || {
            if let Some(shown) = shown {
                crate::journal::set_sink(Some(Box::new(move |event: &Event| {
                    if let Ok(mut shown) = shown.lock() {
                        if let Some(events) = shown.as_mut() {
                            events.push(event.clone());
                        }
                    }
                })));
            }
            let _ = watching.send(Watch::install());
            // The waiter may have given up: then nobody reads this.
            let _ = done.send(job());
        })
        .expect("spawn a thread for the run");
    let watch = watched.recv().ok();
    let received = match budget {
        Some(budget) => result.recv_timeout(budget).map_err(|e| match e {
            mpsc::RecvTimeoutError::Timeout => Some(budget),
            mpsc::RecvTimeoutError::Disconnected => None,
        }),
        None => result.recv().map_err(|_| None),
    };
    let parts = match received {
        Ok(finished) => {
            handle
                .join()
                .expect("a run's thread panicked outside its simulation");
            finished
        }
        // Dropping the handle detaches the thread: it cannot be stopped, only
        // no longer waited for.
        Err(Some(budget)) => {
            // The events journaled up to now; the abandoned thread's
            // later ones go nowhere.
            let events = prefix
                .and_then(|p| p.lock().ok().and_then(|mut p| p.take()))
                .unwrap_or_default();
            let journal = Journal::from_events(events);
            let sim_time = journal
                .events()
                .last()
                .map_or(Duration::ZERO, |e| Duration::from_nanos(e.t_ns));
            (
                Outcome::TimedOut {
                    budget,
                    node: watch.and_then(|w| w.running()),
                },
                journal,
                sim_time,
                Vec::new(),
                Vec::new(),
            )
        }
        Err(None) => {
            let _ = handle.join();
            panic!("a run's thread panicked outside its simulation")
        }
    };
    RunResult::of(seed, started, parts)
}

/// `60s`, `1.5s`, `250ms`: a budget as a user wrote it.
fn humanize(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) && Duration::from_millis(d.as_millis() as u64) == d {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.3}s", d.as_secs_f64())
    }
}

const THREAD_PREFIX: &str = "fencesim-seed-";

/// Runs the world that `build` makes with `seed` on a fresh thread, waits
/// for it, and returns when the run has ended: [`run()`] for a `build` that
/// borrows (a thread spawned per run, not kept: its hasher keys and
/// thread-locals go with it, see the module's docs).
///
/// # Panics
/// If the thread cannot be spawned.
pub fn run_fresh<M, F>(seed: u64, build: F) -> RunResult
where
    M: Message,
    F: FnOnce() -> WorldBuilder<M> + Send,
{
    install_panic_hook();
    let started = Instant::now();
    // A watched caller's watch sees this run too.
    let inherited = watch();
    let parts = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name(format!("{THREAD_PREFIX}{seed}"))
            .spawn_scoped(scope, move || {
                if let Some(watch) = inherited {
                    WATCH.with(|w| *w.borrow_mut() = Some(watch));
                }
                run_parts(seed, build)
            })
            .expect("spawn a thread for the run")
            .join()
            .unwrap_or_else(|payload| panic::resume_unwind(payload))
    });
    RunResult::of(seed, started, parts)
}

/// Runs the world that `build` makes with `seed` on the calling thread, with
/// no wall-clock budget, and returns when the run has ended. The thread may
/// run any number of seeds, one after the other, crashed runs included;
/// each gives the journal it gives on a fresh thread ([`run()`]) unless
/// code in it depends on what the thread kept from earlier runs (std's
/// hasher keys, thread-locals: see the module's docs). [`run_fresh`] has
/// no such caveat.
///
/// # Panics
/// If called from inside a madsim runtime (a run's own handler, say): runs
/// do not nest.
pub fn run_here<M, F>(seed: u64, build: F) -> RunResult
where
    M: Message,
    F: FnOnce() -> WorldBuilder<M>,
{
    assert!(
        madsim::runtime::Handle::try_current().is_err(),
        "sim::run_here called inside a running simulation: runs do not nest"
    );
    install_panic_hook();
    let started = Instant::now();
    RunResult::of(seed, started, run_parts(seed, build))
}

/// Marks this thread as running a simulation while alive: its panics are
/// the run's outcome, not printed.
struct InRun;

impl InRun {
    fn enter() -> InRun {
        IN_RUN.with(|r| r.set(true));
        InRun
    }
}

impl Drop for InRun {
    fn drop(&mut self) {
        IN_RUN.with(|r| r.set(false));
    }
}

fn run_parts<M, F>(seed: u64, build: F) -> Parts
where
    M: Message,
    F: FnOnce() -> WorldBuilder<M>,
{
    let _in_run = InRun::enter();
    // A run that ended before its panic was read (none should) leaves
    // nothing to the next one on this thread.
    LAST_PANIC.with(|p| p.borrow_mut().take());
    let _dispatch = crate::capture::install();
    let runtime = madsim::runtime::Runtime::with_seed_and_config(seed, madsim::Config::default());
    let result = panic::catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(async move { run_world(build()).await })
    }));
    let world = take_current::<M>();
    let (journal, node, sim_time, fired, waits) = match &world {
        Some(w) => {
            let mut w = w.borrow_mut();
            let cut_short = matches!(&result, Ok(o) if o.is_cut_short());
            let waits = if cut_short {
                w.undriven_waits()
            } else {
                Vec::new()
            };
            let node = w.current.map(|id| w.names[id].to_string());
            let sim_time = Duration::from_nanos(w.now_ns_outside());
            // Node tasks that were still waiting hold the world, and the
            // world holds their wakers; madsim, for its part, keeps the
            // tasks of live nodes after its runtime is dropped. Kill the
            // nodes and break the cycle, or every run of a sweep leaks its
            // world and its tasks.
            for id in w.madsim_nodes() {
                runtime.handle().kill(id);
            }
            w.dismantle();
            // The world is dropped right after: move its journal out rather
            // than copy it (a copy per seed costs sweeps several percent).
            let fired = w.fired_ns.iter().map(|t| t.map(Duration::from_nanos));
            let fired = fired.collect();
            (std::mem::take(&mut w.journal), node, sim_time, fired, waits)
        }
        None => (
            Journal::default(),
            None,
            Duration::ZERO,
            Vec::new(),
            Vec::new(),
        ),
    };
    drop(world);
    // The killed nodes' tasks are dropped when the executor next runs.
    let _ = panic::catch_unwind(AssertUnwindSafe(|| runtime.block_on(async {})));
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(payload) => Outcome::Crashed {
            node,
            message: named_cause(
                LAST_PANIC
                    .with(|p| p.borrow_mut().take())
                    .unwrap_or_else(|| panic_text(&*payload)),
            ),
        },
    };
    (outcome, journal, sim_time, fired, waits)
}

/// A panic's message, with the cause named when it is a call a simulation
/// cannot host: the panics those calls raise say nothing of fencesim (a
/// runtime missing, an assertion inside std).
fn named_cause(message: String) -> String {
    let cause = if message.contains("there is no reactor running")
        || message.contains("must be called from the context of a Tokio")
    {
        Some(
            "tokio's own runtime (tokio::time, tokio::net, tokio::spawn) does not run inside \
             a simulation: await the handle's sleep, timeout, recv and spawn (fencesim_env::Env) \
             instead",
        )
    } else if message.contains("library/std/src/sys/") && message.contains("thread") {
        Some(
            "std::thread::spawn (or a crate that starts a thread) was called inside a \
             simulation, which runs on one thread: spawn a task on the handle \
             (Handle::spawn, Env::spawn) instead",
        )
    } else {
        None
    };
    match cause {
        Some(cause) => format!("{cause} (the panic: {message})"),
        None => message,
    }
}

/// The message of a panic caught in a run: what the panic hook recorded
/// (the text and its location), else the payload's text.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    named_cause(
        LAST_PANIC
            .with(|p| p.borrow_mut().take())
            .unwrap_or_else(|| panic_text(payload)),
    )
}

fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// What a run's thread shows other threads while it runs: the node whose
/// handler is running, to name it if the run times out. [`run_within`]
/// watches the thread it spawns; [`Watch::install`] watches the calling
/// thread's runs, and those of the threads [`run_fresh`] spawns for it.
#[derive(Debug, Default)]
pub struct Watch {
    /// The running node's id + 1; 0 between handlers.
    running: AtomicUsize,
    /// The node names of the world running on the thread.
    names: Mutex<Vec<String>>,
}

impl Watch {
    /// Watches the runs made on the calling thread from now on.
    pub fn install() -> Arc<Watch> {
        let watch = Arc::new(Watch::default());
        WATCH.with(|w| *w.borrow_mut() = Some(watch.clone()));
        watch
    }

    /// The node whose handler is running, if one is.
    pub fn running(&self) -> Option<String> {
        let id = self.running.load(Ordering::Relaxed).checked_sub(1)?;
        let names = self.names.lock().ok()?;
        names.get(id).cloned()
    }

    /// The world's nodes are `names`.
    pub(crate) fn names(&self, names: Vec<String>) {
        if let Ok(mut mine) = self.names.lock() {
            *mine = names;
        }
    }

    /// Node `id`'s handler runs (`None`: none does).
    pub(crate) fn set_running(&self, id: Option<usize>) {
        self.running
            .store(id.map_or(0, |id| id + 1), Ordering::Relaxed);
    }
}

/// This thread's watch, when the run on it is waited for with a budget.
pub(crate) fn watch() -> Option<Arc<Watch>> {
    WATCH.with(|w| w.borrow().clone())
}

thread_local! {
    /// Set by [`run_within`] on the thread it spawns.
    static WATCH: RefCell<Option<Arc<Watch>>> = const { RefCell::new(None) };
    static LAST_PANIC: RefCell<Option<String>> = const { RefCell::new(None) };
    /// Whether this thread is inside [`run_parts`].
    static IN_RUN: Cell<bool> = const { Cell::new(false) };
}

/// Panics inside a run are reported in the run's outcome, not printed: a
/// sweep over thousands of seeds stays readable. Other threads, and a run's
/// thread outside its runs, keep the previous hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if IN_RUN.with(Cell::get) {
                let location = info
                    .location()
                    .map(|l| format!(" at {}:{}", l.file(), l.line()))
                    .unwrap_or_default();
                let text = panic_text(info.payload());
                LAST_PANIC.with(|p| *p.borrow_mut() = Some(format!("{text}{location}")));
            } else {
                previous(info);
            }
        }));
    });
}
