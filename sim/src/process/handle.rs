//! The process's handle on its node: clocks, sleeps, the network, spawning,
//! randomness and the disk, and the state they share with the step.

use std::cell::RefCell;
use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll, Waker};
use std::time::Duration;

use crate::actor::{Context, Message, NodeId, TimerId};
use crate::journal::Name;

use super::BoxFuture;

/// What a step asked of the world, in order, each marked with the number of
/// events the step had emitted before it (so a pause fired by an event
/// holds what came after it).
pub(super) enum Op<M> {
    Send {
        mark: usize,
        to: NodeId,
        msg: M,
    },
    SetTimer {
        mark: usize,
        key: u64,
        after: Duration,
    },
    CancelTimer {
        mark: usize,
        key: u64,
    },
}

/// One sleep's timer.
#[derive(Default)]
struct Timer {
    /// The world's id, once the step that set it is carried out.
    id: Option<TimerId>,
    fired: bool,
    waker: Option<Waker>,
}

/// The state the handle, its futures and the process's steps share.
pub(super) struct Core<M> {
    me: NodeId,
    names: Rc<[Name]>,
    mono_ns: i64,
    wall_ns: i64,
    /// Inside a step: the handle may act. Outside (a crash dropping the
    /// tasks), what it is asked to do is nothing.
    in_step: bool,
    ops: Vec<Op<M>>,
    timers: BTreeMap<u64, Timer>,
    next_key: u64,
    mailbox: VecDeque<(NodeId, M)>,
    receivers: Vec<Waker>,
    /// Tasks spawned during the step, for the executor to adopt.
    pub(super) spawned: Vec<BoxFuture>,
    /// Set by a handle future that returns `Pending` having arranged to be
    /// woken by the world; read by the executor after each poll.
    pub(super) waits_on_handle: bool,
    pub(super) disk: Disk,
}

impl<M: Message> Core<M> {
    pub(super) fn new(disk: Disk) -> Self {
        Core {
            me: 0,
            names: Rc::from(Vec::new()),
            mono_ns: 0,
            wall_ns: 0,
            in_step: false,
            ops: Vec::new(),
            timers: BTreeMap::new(),
            next_key: 0,
            mailbox: VecDeque::new(),
            receivers: Vec::new(),
            spawned: Vec::new(),
            waits_on_handle: false,
            disk,
        }
    }

    pub(super) fn begin_step(&mut self, ctx: &Context<'_, M>) {
        if self.names.is_empty() {
            self.names = Rc::from(ctx.names.to_vec());
        }
        self.me = ctx.me();
        self.mono_ns = ctx.mono_ns();
        self.wall_ns = ctx.wall_ns();
        self.in_step = true;
    }

    pub(super) fn end_step(&mut self) -> Vec<Op<M>> {
        self.in_step = false;
        std::mem::take(&mut self.ops)
    }

    pub(super) fn spawn_boxed(&mut self, future: BoxFuture) {
        self.spawned.push(future);
    }

    pub(super) fn deliver(&mut self, from: NodeId, msg: M) {
        self.mailbox.push_back((from, msg));
        for w in self.receivers.drain(..) {
            w.wake();
        }
    }

    pub(super) fn timer_fired(&mut self, key: u64) {
        if let Some(timer) = self.timers.get_mut(&key) {
            timer.fired = true;
            timer.id = None;
            if let Some(w) = timer.waker.take() {
                w.wake();
            }
        }
    }

    pub(super) fn timer_set(&mut self, key: u64, id: TimerId) {
        if let Some(timer) = self.timers.get_mut(&key) {
            timer.id = Some(id);
        }
    }

    /// The world's id of a timer whose sleep was dropped before it fired.
    pub(super) fn timer_cancelled(&mut self, key: u64) -> Option<TimerId> {
        self.timers.remove(&key).and_then(|t| t.id)
    }

    /// A crash: everything but the disk is lost. Returns the tasks spawned
    /// and not yet adopted, to be dropped outside the borrow.
    pub(super) fn crash(&mut self) -> Vec<BoxFuture> {
        self.in_step = false;
        self.ops.clear();
        self.timers.clear();
        self.mailbox.clear();
        self.receivers.clear();
        std::mem::take(&mut self.spawned)
    }

    fn mark() -> usize {
        crate::capture::len()
    }
}

/// A process's handle on its node. Cheap to clone; every clone is the same
/// handle. Its methods act only while the process runs in one of its node's
/// steps: called from a `Drop` during a crash, they do nothing.
pub struct Handle<M> {
    core: Rc<RefCell<Core<M>>>,
}

impl<M> Clone for Handle<M> {
    fn clone(&self) -> Self {
        Handle {
            core: self.core.clone(),
        }
    }
}

impl<M> fmt::Debug for Handle<M> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

impl<M: Message> Handle<M> {
    pub(super) fn new(core: Rc<RefCell<Core<M>>>) -> Self {
        Handle { core }
    }

    /// This node's id.
    pub fn me(&self) -> NodeId {
        self.core.borrow().me
    }

    /// This node's name.
    pub fn name(&self) -> Name {
        let core = self.core.borrow();
        core.names[core.me].clone()
    }

    /// The name of node `id`.
    pub fn name_of(&self, id: NodeId) -> Name {
        self.core.borrow().names[id].clone()
    }

    /// The id of the node called `name`, if there is one.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.core.borrow().names.iter().position(|n| n == name)
    }

    /// The node's monotonic clock: how long it has run by its own reckoning
    /// (drift and rate changes apply; jumps do not). `Instant::now()` in a
    /// step reads the same clock: `Instant`s taken in two steps are as far
    /// apart as the two steps' `now()`.
    pub fn now(&self) -> Duration {
        Duration::from_nanos(self.core.borrow().mono_ns.max(0) as u64)
    }

    /// The node's monotonic clock, in nanoseconds.
    pub fn mono_ns(&self) -> i64 {
        self.core.borrow().mono_ns
    }

    /// The node's wall clock, in nanoseconds since the run's epoch: skew,
    /// drift and jumps apply, and it can go back. `SystemTime::now()` in a
    /// step reads the same clock, on madsim's epoch (a date in 2022–2023
    /// drawn from the seed) instead of the run's.
    pub fn wall_ns(&self) -> i64 {
        self.core.borrow().wall_ns
    }

    /// Waits `duration` on the node's monotonic clock.
    pub fn sleep(&self, duration: Duration) -> Sleep<M> {
        Sleep {
            core: self.core.clone(),
            after: duration,
            state: SleepState::Unarmed,
        }
    }

    /// Waits until the node's monotonic clock reads `deadline` (as
    /// [`Handle::now`] gives it); at once if it already does.
    pub fn sleep_until(&self, deadline: Duration) -> Sleep<M> {
        let now = self.now();
        self.sleep(deadline.saturating_sub(now))
    }

    /// Runs `future` for at most `duration` on the node's monotonic clock.
    pub fn timeout<F: Future>(&self, duration: Duration, future: F) -> Timeout<M, F> {
        Timeout {
            future: Box::pin(future),
            sleep: self.sleep(duration),
        }
    }

    /// Sends `msg` to node `to` over the world's network, which may delay,
    /// lose, duplicate or hold it as the run's faults say.
    pub fn send(&self, to: NodeId, msg: M) {
        let mut core = self.core.borrow_mut();
        assert!(to < core.names.len(), "send to unknown node {to}");
        if core.in_step {
            core.ops.push(Op::Send {
                mark: Core::<M>::mark(),
                to,
                msg,
            });
        }
    }

    /// The next message to arrive (the oldest waiting, if any), with its
    /// sender.
    pub fn recv(&self) -> Recv<M, fn(NodeId, &M) -> bool> {
        fn any<M>(_: NodeId, _: &M) -> bool {
            true
        }
        self.recv_where(any::<M>)
    }

    /// The oldest message, waiting or yet to arrive, for which `wanted`
    /// says yes; the others stay in the mailbox for later receives (an
    /// answer to one request among stray copies and late answers).
    pub fn recv_where<P: FnMut(NodeId, &M) -> bool>(&self, wanted: P) -> Recv<M, P> {
        Recv {
            core: self.core.clone(),
            wanted,
        }
    }

    /// [`Handle::recv_where`] for the messages of node `from` only: the
    /// oldest from it that `wanted` takes (an answer from one server).
    pub fn recv_from<P: FnMut(&M) -> bool>(
        &self,
        from: NodeId,
        mut wanted: P,
    ) -> Recv<M, impl FnMut(NodeId, &M) -> bool> {
        self.recv_where(move |sender, m| sender == from && wanted(m))
    }

    /// The oldest waiting message, if any, without waiting.
    pub fn try_recv(&self) -> Option<(NodeId, M)> {
        self.core.borrow_mut().mailbox.pop_front()
    }

    /// Runs `future` as a task of this process, beside the others: it stops
    /// when it ends, or when the node crashes.
    pub fn spawn<T: 'static>(&self, future: impl Future<Output = T> + 'static) -> JoinHandle<T> {
        let slot = Rc::new(RefCell::new(Slot {
            value: None,
            waker: None,
        }));
        let filled = slot.clone();
        let task = async move {
            let value = future.await;
            let mut slot = filled.borrow_mut();
            slot.value = Some(value);
            if let Some(w) = slot.waker.take() {
                w.wake();
            }
        };
        self.core.borrow_mut().spawned.push(Box::pin(task));
        JoinHandle {
            slot,
            core: self.core.clone(),
            taken: false,
        }
    }

    /// The run's seeded random number generator (the same one actors draw
    /// from).
    pub fn rng(&self) -> madsim::rand::GlobalRng {
        madsim::rand::thread_rng()
    }

    /// The node's disk: what survives a crash.
    pub fn disk(&self) -> Disk {
        self.core.borrow().disk.clone()
    }
}

/// [`Handle::sleep`]'s future.
pub struct Sleep<M: Message> {
    core: Rc<RefCell<Core<M>>>,
    after: Duration,
    state: SleepState,
}

#[derive(Clone, Copy)]
enum SleepState {
    Unarmed,
    Armed(u64),
    Done,
}

impl<M: Message> Future for Sleep<M> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        let shared = self.core.clone();
        let mut core = shared.borrow_mut();
        // Even a zero sleep arms a timer: it yields to the world, and wakes
        // in a step of its own, as an actor's zero timer does.
        let key = match self.state {
            SleepState::Done => return Poll::Ready(()),
            SleepState::Armed(key) => key,
            SleepState::Unarmed => {
                let key = core.next_key;
                core.next_key += 1;
                core.timers.insert(key, Timer::default());
                if core.in_step {
                    core.ops.push(Op::SetTimer {
                        mark: Core::<M>::mark(),
                        key,
                        after: self.after,
                    });
                }
                self.state = SleepState::Armed(key);
                key
            }
        };
        match core.timers.get_mut(&key) {
            Some(timer) if timer.fired => {
                core.timers.remove(&key);
                self.state = SleepState::Done;
                Poll::Ready(())
            }
            Some(timer) => {
                timer.waker = Some(cx.waker().clone());
                core.waits_on_handle = true;
                Poll::Pending
            }
            // Its timer died with an earlier incarnation of the node.
            None => Poll::Pending,
        }
    }
}

impl<M: Message> Drop for Sleep<M> {
    fn drop(&mut self) {
        let SleepState::Armed(key) = self.state else {
            return;
        };
        let Ok(mut core) = self.core.try_borrow_mut() else {
            return;
        };
        if core.in_step && core.timers.get(&key).is_some_and(|t| !t.fired) {
            core.ops.push(Op::CancelTimer {
                mark: Core::<M>::mark(),
                key,
            });
        } else {
            core.timers.remove(&key);
        }
    }
}

/// [`Handle::timeout`]'s error: the time ran out first (the seam's own, so
/// that code written against `fencesim_env` matches on one type).
pub use fencesim_env::Elapsed;

/// [`Handle::timeout`]'s future.
pub struct Timeout<M: Message, F> {
    future: Pin<Box<F>>,
    sleep: Sleep<M>,
}

impl<M: Message, F: Future> Future for Timeout<M, F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(v) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Ok(v));
        }
        // `Sleep` is `Unpin`: its state is in the core.
        match Pin::new(&mut self.sleep).poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}

/// [`Handle::recv`]'s and [`Handle::recv_where`]'s future.
pub struct Recv<M: Message, P> {
    core: Rc<RefCell<Core<M>>>,
    wanted: P,
}

impl<M: Message, P: FnMut(NodeId, &M) -> bool + Unpin> Future for Recv<M, P> {
    type Output = (NodeId, M);

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<(NodeId, M)> {
        let this = &mut *self;
        let mut core = this.core.borrow_mut();
        let wanted = &mut this.wanted;
        if let Some(at) = core.mailbox.iter().position(|(from, m)| wanted(*from, m)) {
            return Poll::Ready(core.mailbox.remove(at).expect("position is in the mailbox"));
        }
        core.receivers.push(cx.waker().clone());
        core.waits_on_handle = true;
        Poll::Pending
    }
}

struct Slot<T> {
    value: Option<T>,
    waker: Option<Waker>,
}

/// A spawned task's result, as a future; dropping it lets the task run on.
pub struct JoinHandle<T> {
    slot: Rc<RefCell<Slot<T>>>,
    core: Rc<RefCell<dyn WaitFlag>>,
    taken: bool,
}

/// What a join needs of the core: to say it waits on the handle.
trait WaitFlag {
    fn note_wait(&mut self);
}

impl<M> WaitFlag for Core<M> {
    fn note_wait(&mut self) {
        self.waits_on_handle = true;
    }
}

impl<T> JoinHandle<T> {
    /// Whether the task has ended.
    pub fn is_finished(&self) -> bool {
        self.taken || self.slot.borrow().value.is_some()
    }
}

impl<T> Future for JoinHandle<T> {
    type Output = T;

    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<T> {
        assert!(!self.taken, "a JoinHandle polled after it gave its value");
        let value = self.slot.borrow_mut().value.take();
        match value {
            Some(v) => {
                self.taken = true;
                Poll::Ready(v)
            }
            None => {
                self.slot.borrow_mut().waker = Some(cx.waker().clone());
                self.core.borrow_mut().note_wait();
                Poll::Pending
            }
        }
    }
}

/// A node's disk: named byte strings that survive the node's crashes (and
/// nothing else of the process does). Shared by every clone.
#[derive(Clone, Debug, Default)]
pub struct Disk {
    files: Rc<RefCell<BTreeMap<String, Vec<u8>>>>,
}

impl Disk {
    /// The bytes stored under `key`.
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        self.files.borrow().get(key).cloned()
    }

    /// Stores `bytes` under `key`, durably (at once: no fsync to forget).
    pub fn put(&self, key: &str, bytes: impl Into<Vec<u8>>) {
        self.files.borrow_mut().insert(key.to_owned(), bytes.into());
    }

    /// Removes `key`.
    pub fn remove(&self, key: &str) -> Option<Vec<u8>> {
        self.files.borrow_mut().remove(key)
    }

    /// A `u64` stored with [`Disk::put_u64`].
    pub fn get_u64(&self, key: &str) -> Option<u64> {
        let bytes = self.get(key)?;
        Some(u64::from_le_bytes(bytes.try_into().ok()?))
    }

    /// Stores a `u64` (a counter, a token).
    pub fn put_u64(&self, key: &str, value: u64) {
        self.put(key, value.to_le_bytes());
    }

    /// Adds one to the counter under `key` (0 when absent) and returns it:
    /// ids that stay unique across the node's crashes.
    pub fn next_u64(&self, key: &str) -> u64 {
        let n = self.get_u64(key).unwrap_or(0) + 1;
        self.put_u64(key, n);
        n
    }
}
