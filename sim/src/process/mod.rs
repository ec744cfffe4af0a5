//! Hosted processes: ordinary async code on a node, on the node's own clock.
//!
//! A [`Process`] is an [`Actor`] that hosts a future, as turmoil hosts one
//! on each of its hosts, but in *this* world: each input the world hands the
//! node (its start, a message, one of its timers) wakes the tasks that wait
//! for it, and the process polls its ready tasks until none is ready. That is
//! one *step*, carried out by the world exactly as an actor's handler is, so
//! everything the world does to actors applies to processes unchanged:
//!
//! - **Time is the node's.** [`Handle::now`] and [`Handle::wall_ns`] read
//!   the node's monotonic and wall clocks, and so, inside a step, do std's
//!   `Instant::now()` and `SystemTime::now()` (and chrono, the `time` crate
//!   and `madsim::time::Instant`, built on them); [`Handle::sleep`] and
//!   [`Handle::timeout`] are timers on the node's monotonic clock, so skew,
//!   drift, rate changes and jumps apply, and a sleeper whose node changes
//!   rate is re-armed like any timer. Time does not pass inside a step.
//! - **The network is the world's.** [`Handle::send`] and [`Handle::recv`]
//!   go through the journaled network: every network fault applies and every
//!   message is journaled.
//! - **Faults cut a step where they fire.** A pause fired by an event the
//!   process emitted (`after = "client1:acquired"`) holds whatever the same
//!   step did after that event (messages, timers, later events) until the
//!   node resumes. A crash drops the process and every task it spawned (their
//!   `Drop` sends nothing); a restart runs it again from the start, with its
//!   [`Disk`].
//! - **Randomness is the seed's.** [`Handle::rng`] draws from the run's
//!   seeded generator, and so does `rand::rngs::OsRng`. `rand::thread_rng()`
//!   is seeded from it once per thread: every seed's run gets a fresh
//!   thread ([`crate::run()`], [`crate::run_fresh`]), so it is the seed's;
//!   only a thread that runs seed after seed ([`crate::run_here`], which
//!   fencesim itself no longer uses for a seed) keeps its first.
//!
//! A process that awaits something the world does not drive (a real timer, a
//! thread, an OS socket, a channel nobody will ever send on) would hang or
//! run on time fencesim does not control. The process notices both shapes
//! and ends the run with an explanation, as a panicking handler does: a task
//! woken from outside a step, and a step after which every live task waits
//! and none of them waits on the handle.
//!
//! ```
//! use std::time::Duration;
//! use sim::process::Process;
//! use sim::{Limits, Message, WorldBuilder};
//!
//! #[derive(Clone, Debug)]
//! struct Ping(u32);
//! impl Message for Ping {
//!     fn summary(&self) -> String { format!("ping {}", self.0) }
//! }
//!
//! let result = sim::run(7, || {
//!     let mut world = WorldBuilder::new(Limits::default());
//!     world.node("a", Process::new(|h| async move {
//!         let b = h.node("b").unwrap();
//!         for i in 0..3 {
//!             h.send(b, Ping(i));
//!             h.sleep(Duration::from_millis(100)).await;
//!         }
//!     }));
//!     world.node("b", Process::new(|h| async move {
//!         for _ in 0..3 {
//!             let (_, Ping(i)) = h.recv().await;
//!             sim::emit!("got", n = i);
//!         }
//!     }));
//!     world
//! });
//! assert_eq!(result.outcome, sim::Outcome::Completed);
//! let got = result.journal.events().iter().filter(|e| e.is("b", "got")).count();
//! assert_eq!(got, 3);
//! ```

mod env;
mod executor;
mod handle;

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

pub use handle::{Disk, Elapsed, Handle, JoinHandle, Recv, Sleep, Timeout};

use crate::actor::{Actor, Context, Message, NodeId, TimerId, TimerOp};
use executor::Executor;
use handle::{Core, Op};

type BoxFuture = Pin<Box<dyn Future<Output = ()>>>;
type Factory<M> = Rc<dyn Fn(Handle<M>) -> BoxFuture>;

/// What starts a step.
enum Input<M> {
    Start,
    Message(NodeId, M),
    Timer(u64),
}

/// An async process hosted on a node: a closure that makes the process's
/// future from its [`Handle`], run at the node's start and again from the
/// start at each restart.
pub struct Process<M> {
    factory: Factory<M>,
    core: Rc<RefCell<Core<M>>>,
    executor: Executor,
    /// Whether the process's main future has ended. The run does not wait
    /// for a finished process; tasks it spawned still run while the node
    /// gets messages and timers (a task that hands back stray grants), as a
    /// done actor still handles its inputs. A crash does not change it: a
    /// restart runs the main future again.
    finished: Rc<Cell<bool>>,
}

impl<M: Message> Process<M> {
    /// A process running `main` with the node's handle.
    pub fn new<F, Fut>(main: F) -> Self
    where
        F: Fn(Handle<M>) -> Fut + 'static,
        Fut: Future<Output = ()> + 'static,
    {
        Process {
            factory: Rc::new(move |h| Box::pin(main(h))),
            core: Rc::new(RefCell::new(Core::new(Disk::default()))),
            executor: Executor::new(),
            finished: Rc::new(Cell::new(false)),
        }
    }

    /// The process's disk, shared with the process itself: what a test
    /// reads after (or sets up before) a run.
    pub fn disk(&self) -> Disk {
        self.core.borrow().disk.clone()
    }

    /// One step: takes `input` (inside the step, so that the wake-ups it
    /// causes are not taken for outside ones), polls every ready task, then
    /// hands what the tasks did to the world through `ctx`.
    fn step(&mut self, ctx: &mut Context<'_, M>, input: Input<M>) {
        self.core.borrow_mut().begin_step(ctx);
        self.executor.begin_step();
        if let Some(task) = self.executor.foreign_wake() {
            self.fail(
                ctx,
                &format!("its task {task} was woken from outside the simulation"),
            );
        }
        match input {
            Input::Start => {
                // Made outside any borrow of the core: the closure may use
                // the handle before its first await.
                let main = (self.factory)(Handle::new(self.core.clone()));
                let finished = self.finished.clone();
                finished.set(false);
                self.core.borrow_mut().spawn_boxed(Box::pin(async move {
                    main.await;
                    finished.set(true);
                }));
            }
            Input::Message(from, msg) => self.core.borrow_mut().deliver(from, msg),
            Input::Timer(tag) => self.core.borrow_mut().timer_fired(tag),
        }
        self.executor.run(&self.core);
        self.executor.end_step();
        let ops = self.core.borrow_mut().end_step();
        for op in ops {
            match op {
                Op::Send { mark, to, msg } => ctx.out.sends.push((mark, to, msg)),
                Op::SetTimer { mark, key, after } => {
                    let id = TimerId(*ctx.next_timer);
                    *ctx.next_timer += 1;
                    self.core.borrow_mut().timer_set(key, id);
                    ctx.out.timers.push((
                        mark,
                        TimerOp::Set {
                            id,
                            after,
                            tag: key,
                        },
                    ));
                }
                Op::CancelTimer { mark, key } => {
                    if let Some(id) = self.core.borrow_mut().timer_cancelled(key) {
                        ctx.out.timers.push((mark, TimerOp::Cancel(id)));
                    }
                }
            }
        }
        if self.executor.has_tasks() && !self.executor.any_waits_on_handle() {
            self.fail(
                ctx,
                "every task of it waits, and none waits on its handle (a sleep, a recv, a \
                 spawned task): it awaits something the simulation does not drive",
            );
        }
    }

    /// Ends the run: a process that awaits what the world does not drive
    /// cannot be judged. The world catches the panic and ends the run with
    /// it as its outcome, naming the node.
    fn fail(&self, ctx: &Context<'_, M>, what: &str) -> ! {
        panic!(
            "the process on {} cannot be simulated: {what}. Await only its handle's sleep, \
             timeout, recv and spawned tasks (no real timer, thread or socket)",
            ctx.name()
        )
    }
}

impl<M: Message> Actor<M> for Process<M> {
    fn on_start(&mut self, ctx: &mut Context<'_, M>) {
        self.step(ctx, Input::Start);
    }

    fn on_message(&mut self, ctx: &mut Context<'_, M>, from: NodeId, msg: M) {
        self.step(ctx, Input::Message(from, msg));
    }

    fn on_timer(&mut self, ctx: &mut Context<'_, M>, _id: TimerId, tag: u64) {
        self.step(ctx, Input::Timer(tag));
    }

    fn on_crash(&mut self) {
        // The tasks go first, outside any borrow: their `Drop`s may reach
        // the core, and send nothing since no step is under way.
        self.executor.clear();
        let tasks = self.core.borrow_mut().crash();
        drop(tasks);
    }

    fn is_done(&self) -> bool {
        self.finished.get()
    }

    fn undriven_waits(&self) -> Vec<String> {
        self.executor
            .undriven()
            .into_iter()
            .map(|task| {
                let which = if task == 0 {
                    "its main task".to_owned()
                } else {
                    format!("its task {task}")
                };
                format!("{which} {UNDRIVEN}")
            })
            .collect()
    }
}

/// What a task that waits on nothing of the handle's is waiting on, as far
/// as the process can tell.
const UNDRIVEN: &str = "awaits something the simulation does not drive (a madsim or tokio \
                        timer, std::future::pending(), a channel no task will send on, a real \
                        socket or thread); await the handle's sleep, timeout, recv or spawned \
                        tasks instead";
