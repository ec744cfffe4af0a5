//! The run's futures: the supervisor working through the agenda, and each
//! node's task taking inputs from its inbox.

use std::any::Any;
use std::cell::RefCell;
use std::future::Future;
use std::pin::{pin, Pin};
use std::rc::Rc;
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use crate::actor::{Message, NodeId};
use crate::run::Outcome;

use super::step::Input;
use super::{World, WorldBuilder};

thread_local! {
    /// The world of this thread's run. Node tasks must be created through
    /// madsim's `Send + Sync` init closures, which can carry only an index,
    /// so they find their world here; a thread runs one world at a time.
    static CURRENT: RefCell<Option<Rc<dyn Any>>> = const { RefCell::new(None) };
}

type Shared<M> = Rc<RefCell<World<M>>>;

fn current<M: Message>() -> Shared<M> {
    let any = CURRENT
        .with(|c| c.borrow().clone())
        .expect("no world on this thread");
    any.downcast::<RefCell<World<M>>>()
        .unwrap_or_else(|_| panic!("the world on this thread has another message type"))
}

/// Takes this thread's world out, if a run left one (after a panic).
pub(crate) fn take_current<M: Message>() -> Option<Shared<M>> {
    let any = CURRENT.with(|c| c.borrow_mut().take())?;
    any.downcast::<RefCell<World<M>>>().ok()
}

/// Builds the world on this thread and runs it to its end.
pub(crate) async fn run_world<M: Message>(builder: WorldBuilder<M>) -> Outcome {
    let world: Shared<M> = Rc::new(RefCell::new(World::new(builder)));
    CURRENT.with(|c| *c.borrow_mut() = Some(world.clone() as Rc<dyn Any>));
    // Faults at time zero (initial clock skew, say) hold before anyone acts.
    world.borrow_mut().run_due(0);
    let handle = madsim::runtime::Handle::current();
    let count = world.borrow().nodes.len();
    for id in 0..count {
        let name = world.borrow().names[id].clone();
        let node = handle
            .create_node()
            .name(name)
            .init(move || node_main::<M>(id))
            .build();
        let mut w = world.borrow_mut();
        w.nodes[id].madsim_id = Some(node.id());
        // A pause that began before the node existed (at time zero) holds it
        // from its first action on.
        if w.nodes[id].pauses > 0 {
            handle.pause(node.id());
        }
        // Likewise a crash at time zero: the node starts down.
        if !w.nodes[id].up {
            handle.kill(node.id());
        }
    }
    let limit_ns = world.borrow().limits.duration.as_nanos() as u64;
    loop {
        let deadline = {
            let mut w = world.borrow_mut();
            let now = w.now_ns();
            if now >= limit_ns {
                w.finish(Outcome::TimeLimit);
            }
            w.run_due(now);
            if let Some(outcome) = w.stop.clone() {
                return outcome;
            }
            let next = w
                .agenda
                .peek()
                .map_or(limit_ns, |first| first.at_ns.min(limit_ns));
            w.agenda_deadline = next;
            w.agenda_poked = false;
            next.saturating_sub(now)
        };
        let at = madsim::time::Instant::now() + Duration::from_nanos(deadline);
        Supervise {
            world: world.clone(),
            sleep: pin!(madsim::time::sleep_until(at)),
        }
        .await;
    }
}

/// The supervisor's wait: until its deadline, or until woken early (an
/// earlier agenda item, the end of the run).
struct Supervise<'s, M> {
    world: Shared<M>,
    sleep: Pin<&'s mut madsim::time::Sleep>,
}

impl<M: Message> Future for Supervise<'_, M> {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.sleep.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        let mut w = self.world.borrow_mut();
        if std::mem::take(&mut w.agenda_poked) {
            return Poll::Ready(());
        }
        w.agenda_waker = Some(cx.waker().clone());
        Poll::Pending
    }
}

/// A node's task: take inputs, run them, forever (until a crash drops it).
async fn node_main<M: Message>(id: NodeId) {
    let world = current::<M>();
    let epoch = world.borrow().nodes[id].epoch;
    loop {
        let input = NextInput {
            world: world.clone(),
            id,
            epoch,
        }
        .await;
        // A panic in a handler ends the run here, as its outcome: unwinding
        // into madsim's executor would have it print its own context line
        // (with the path of the machine that built it) before the run ends.
        let stepped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world.borrow_mut().step(id, input);
        }));
        if let Err(payload) = stepped {
            {
                let mut w = world.borrow_mut();
                let node = Some(w.names[id].to_string());
                let message = crate::run::panic_message(&*payload);
                // As `finish`, without moving the run's end past its last
                // event: the same simulated time as a panic that unwinds the
                // runtime.
                if w.stop.is_none() {
                    w.stop = Some(Outcome::Crashed { node, message });
                    w.poke_agenda();
                }
            }
            std::future::pending::<()>().await;
        }
        let (paused, crashed) = {
            let w = world.borrow();
            (w.nodes[id].pauses > 0, w.nodes[id].epoch != epoch)
        };
        if crashed {
            // madsim drops this task; until then it must not act.
            std::future::pending::<()>().await;
        }
        if paused {
            // Hand control back so that madsim holds this node's task.
            YieldNow(false).await;
        }
    }
}

struct NextInput<M> {
    world: Shared<M>,
    id: NodeId,
    epoch: u64,
}

impl<M: Message> Future for NextInput<M> {
    type Output = Input<M>;
    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Input<M>> {
        let mut w = self.world.borrow_mut();
        if w.stop.is_some() || w.nodes[self.id].epoch != self.epoch {
            return Poll::Pending;
        }
        match w.pop_input(self.id) {
            Some(input) => Poll::Ready(input),
            None => {
                w.nodes[self.id].waker = Some(cx.waker().clone());
                Poll::Pending
            }
        }
    }
}

struct YieldNow(bool);

impl Future for YieldNow {
    type Output = ();
    fn poll(mut self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}
