//! The process's tasks and who is ready to run: a small single-threaded
//! executor polled only inside the node's steps.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Wake, Waker};

use super::handle::Core;
use super::BoxFuture;

/// Tasks woken and not yet polled, shared with their wakers. A waker is
/// `Send + Sync`, so this is behind a mutex, though only the run's thread
/// ever takes it.
#[derive(Default)]
struct Ready {
    queue: VecDeque<usize>,
    queued: Vec<bool>,
    /// Inside one of the node's steps: a wake-up now is the simulation's.
    in_step: bool,
    /// The first task woken outside a step, if any.
    foreign: Option<usize>,
}

struct TaskWaker {
    task: usize,
    ready: Arc<Mutex<Ready>>,
}

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut ready = self.ready.lock().unwrap_or_else(|e| e.into_inner());
        if !ready.in_step && ready.foreign.is_none() {
            ready.foreign = Some(self.task);
        }
        push(&mut ready, self.task);
    }
}

fn push(ready: &mut Ready, task: usize) {
    if ready.queued.len() <= task {
        ready.queued.resize(task + 1, false);
    }
    if !ready.queued[task] {
        ready.queued[task] = true;
        ready.queue.push_back(task);
    }
}

struct Task {
    future: BoxFuture,
    waker: Waker,
    /// Whether its latest `Pending` came with a wait on the handle (a
    /// sleep, a message, a spawned task): something the world will end.
    waits_on_handle: bool,
}

pub(super) struct Executor {
    /// Tasks by number, from 0 (the process's main future); a finished task
    /// leaves its slot empty, so numbers stay stable.
    tasks: Vec<Option<Task>>,
    ready: Arc<Mutex<Ready>>,
}

impl Executor {
    pub(super) fn new() -> Self {
        Executor {
            tasks: Vec::new(),
            ready: Arc::default(),
        }
    }

    fn ready(&self) -> std::sync::MutexGuard<'_, Ready> {
        self.ready.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn begin_step(&mut self) {
        self.ready().in_step = true;
    }

    pub(super) fn end_step(&mut self) {
        self.ready().in_step = false;
    }

    /// The first task woken from outside any step, since the last crash.
    pub(super) fn foreign_wake(&self) -> Option<usize> {
        self.ready().foreign
    }

    /// Whether any task is still alive.
    pub(super) fn has_tasks(&self) -> bool {
        self.tasks.iter().any(Option::is_some)
    }

    /// Whether any live task waits on something the world will end.
    pub(super) fn any_waits_on_handle(&self) -> bool {
        self.tasks.iter().flatten().any(|t| t.waits_on_handle)
    }

    /// The live tasks whose latest `Pending` came with no wait on the
    /// handle, by number.
    pub(super) fn undriven(&self) -> Vec<usize> {
        let live = self.tasks.iter().enumerate();
        let live = live.filter_map(|(i, t)| t.as_ref().map(|t| (i, t)));
        live.filter(|(_, t)| !t.waits_on_handle)
            .map(|(i, _)| i)
            .collect()
    }

    /// Polls ready tasks, in the order they were woken, until none is ready.
    /// Tasks spawned meanwhile join in, ready.
    pub(super) fn run<M>(&mut self, core: &Rc<RefCell<Core<M>>>) {
        loop {
            self.adopt(core);
            let next = {
                let mut ready = self.ready();
                let next = ready.queue.pop_front();
                if let Some(task) = next {
                    ready.queued[task] = false;
                }
                next
            };
            let Some(number) = next else { break };
            let Some(task) = self.tasks.get_mut(number).and_then(Option::as_mut) else {
                continue;
            };
            core.borrow_mut().waits_on_handle = false;
            let waker = task.waker.clone();
            let poll = task
                .future
                .as_mut()
                .poll(&mut TaskContext::from_waker(&waker));
            match poll {
                Poll::Ready(()) => {
                    // Dropped outside any borrow: its drop may reach the core.
                    let finished = self.tasks[number].take();
                    drop(finished);
                }
                Poll::Pending => {
                    task.waits_on_handle = core.borrow().waits_on_handle;
                }
            }
        }
    }

    /// Takes the tasks spawned since the last look, each ready to run.
    fn adopt<M>(&mut self, core: &Rc<RefCell<Core<M>>>) {
        let spawned = std::mem::take(&mut core.borrow_mut().spawned);
        for future in spawned {
            let number = self.tasks.len();
            let waker = Waker::from(Arc::new(TaskWaker {
                task: number,
                ready: self.ready.clone(),
            }));
            self.tasks.push(Some(Task {
                future,
                waker,
                waits_on_handle: false,
            }));
            push(&mut self.ready(), number);
        }
    }

    /// A crash: every task is dropped, and wakers that outlive them (held by
    /// whatever they awaited) no longer reach the new incarnation's tasks.
    pub(super) fn clear(&mut self) {
        let tasks = std::mem::take(&mut self.tasks);
        drop(tasks);
        self.ready = Arc::default();
    }
}
